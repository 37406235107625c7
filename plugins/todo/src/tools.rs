//! The `todos_*` tools: their arguments and what each call does to the list. None changes
//! the world outside the agent's own bookkeeping, so none is mutating.

use agent_host_sdk::prelude::*;
use serde::Deserialize;

use crate::config::Config;
use crate::item::TodoList;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTodo {
    /// A short name for the step.
    title: String,
    /// Optional detail.
    description: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddArgs {
    #[schemars(length(min = 1))]
    todos: Vec<NewTodo>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Completion {
    id: u64,
    /// Why it counts as done.
    reason: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteArgs {
    items: Vec<Completion>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveArgs {
    ids: Vec<u64>,
}

pub fn add(_ctx: &Context<Config>, args: AddArgs) -> Result<String, String> {
    let mut list = TodoList::load()?;
    let mut added = Vec::new();
    for todo in &args.todos {
        // One bad title refuses the whole call; the error leaves the bag untouched.
        added.push(list.add(&todo.title, todo.description.as_deref())?);
    }
    list.save()?;
    to_json(&added)
}

pub fn complete(_ctx: &Context<Config>, args: CompleteArgs) -> Result<String, String> {
    let mut list = TodoList::load()?;
    let count = args
        .items
        .iter()
        .filter(|c| list.complete(c.id))
        // The reason is asked for so the model checks its work; logged, not stored.
        .inspect(|c| log::debug(&format!("todo {} completed: {}", c.id, c.reason)))
        .count();
    if count > 0 {
        list.save()?;
    }
    Ok(count.to_string())
}

pub fn remove(_ctx: &Context<Config>, args: RemoveArgs) -> Result<String, String> {
    let mut list = TodoList::load()?;
    let count = args.ids.iter().filter(|&&id| list.remove(id)).count();
    if count > 0 {
        list.save()?;
    }
    Ok(count.to_string())
}

pub fn get_remaining(_ctx: &Context<Config>, _args: NoArgs) -> Result<String, String> {
    to_json(&TodoList::load()?.remaining())
}

pub fn get_all(_ctx: &Context<Config>, _args: NoArgs) -> Result<String, String> {
    to_json(&TodoList::load()?.items)
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string(value).map_err(|error| error.to_string())
}
