//! The `todos_*` tools: their schemas and what each call does to the list.

use agent_host_sdk::prelude::*;
use agent_host_sdk::serde_json;
use serde::Deserialize;

use crate::item::TodoList;

#[derive(Deserialize)]
struct NewTodo {
    title: String,
    description: Option<String>,
}

#[derive(Deserialize)]
struct AddArgs {
    todos: Vec<NewTodo>,
}

#[derive(Deserialize)]
struct Completion {
    id: u64,
    /// Asked for so the model checks its work; logged, not stored in the list.
    reason: String,
}

#[derive(Deserialize)]
struct CompleteArgs {
    items: Vec<Completion>,
}

#[derive(Deserialize)]
struct RemoveArgs {
    ids: Vec<u64>,
}

/// The specs of every tool this plugin offers. None changes the world outside the agent's
/// own bookkeeping, so none is `mutating()`.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new("todos_add", "Adds todos to your list. Returns the new items with their ids.")
            .parameters_json(
                r#"{
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {
                                "title": { "type": "string", "description": "A short name for the step." },
                                "description": { "type": "string", "description": "Optional detail." }
                            },
                            "required": ["title"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["todos"],
                "additionalProperties": false
            }"#,
            ),
        ToolSpec::new(
            "todos_complete",
            "Marks todos as done, each with a short reason. Returns how many were newly completed.",
        )
        .parameters_json(
            r#"{
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": { "type": "integer" },
                            "reason": { "type": "string", "description": "Why it counts as done." }
                        },
                        "required": ["id", "reason"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["items"],
            "additionalProperties": false
        }"#,
        ),
        ToolSpec::new("todos_remove", "Removes todos that no longer apply. Returns how many were removed.")
            .parameters_json(
                r#"{
                "type": "object",
                "properties": { "ids": { "type": "array", "items": { "type": "integer" } } },
                "required": ["ids"],
                "additionalProperties": false
            }"#,
            ),
        ToolSpec::new("todos_get_remaining", "Returns the open todos as JSON."),
        ToolSpec::new("todos_get_all", "Returns every todo, open and done, as JSON."),
    ]
}

/// Runs one tool call against the stored list.
pub fn call(call: &ToolCall) -> Result<String, String> {
    let mut list = TodoList::load()?;
    match call.name.as_str() {
        "todos_add" => {
            let args: AddArgs = call.args()?;
            let mut added = Vec::new();
            for todo in &args.todos {
                // One bad title refuses the whole call; the error leaves the bag untouched.
                added.push(list.add(&todo.title, todo.description.as_deref())?);
            }
            list.save()?;
            to_json(&added)
        }
        "todos_complete" => {
            let args: CompleteArgs = call.args()?;
            let count = args
                .items
                .iter()
                .filter(|c| list.complete(c.id))
                .inspect(|c| log::debug(&format!("todo {} completed: {}", c.id, c.reason)))
                .count();
            if count > 0 {
                list.save()?;
            }
            Ok(count.to_string())
        }
        "todos_remove" => {
            let args: RemoveArgs = call.args()?;
            let count = args.ids.iter().filter(|&&id| list.remove(id)).count();
            if count > 0 {
                list.save()?;
            }
            Ok(count.to_string())
        }
        "todos_get_remaining" => to_json(&list.remaining()),
        "todos_get_all" => to_json(&list.items),
        other => Err(format!("the todo plugin has no tool named `{other}`")),
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string(value).map_err(|error| error.to_string())
}
