//! The `todo-write` plugin: the model keeps its plan with one `TodoWrite` tool that sends the
//! whole list each time. A reminder on the session's first model call, a nudge after
//! `nag_after_rounds` model calls without a write, `/todos`, `todos-changed` events and the
//! same completion loop as the `todo` plugin.
//!
//! State (namespace `todo-write`): `todos` = [{id, content, status, activeForm}], `next_id`,
//! `last_write` (the session's model-call count at the last write).

mod config;
mod render;
mod stop;
mod todos;

use agent_host_sdk::prelude::*;
use serde::{Deserialize, Serialize};

use config::Config;
use todos::{Todo, TodoInput};

const REMINDER: &str =
    "If this work takes several steps, plan it with TodoWrite and keep the list current as you go.";

#[derive(Deserialize)]
struct WriteArgs {
    todos: Vec<TodoInput>,
}

#[derive(Default)]
struct TodoWrite;

/// The `todos-changed` payload, borrowing the list rather than copying it into a JSON tree.
#[derive(Serialize)]
struct Changed<'a> {
    items: &'a [Todo],
}

impl Plugin for TodoWrite {
    fn manifest(&self) -> Manifest {
        Manifest::new("todo-write", env!("CARGO_PKG_VERSION"))
            .with(Capabilities::PROVIDE | Capabilities::CALL_TOOL | Capabilities::STOP)
            .command("todos", "/todos", "Shows the TodoWrite list")
    }

    fn configure(&self, config: Value) -> Result<Value, String> {
        config::configure(config)
    }

    fn provide(&self, ctx: &Context) -> Contribution {
        let config: Config = ctx.config().unwrap_or_default();
        let mut contribution =
            Contribution::default().instructions(config.instructions.clone()).tool(tool_spec(&config));
        if ctx.model_calls() == 0 {
            contribution = contribution.inject(REMINDER);
        } else if let Some(nag) = nag(&config, ctx.model_calls()) {
            contribution = contribution.inject(nag);
        }
        contribution
    }

    fn call_tool(&self, ctx: &Context, call: ToolCall) -> Result<String, String> {
        if call.name != "TodoWrite" {
            return Err(format!("the todo-write plugin has no tool named `{}`", call.name));
        }
        let config: Config = ctx.config()?;
        let args: WriteArgs = call.args()?;
        let todos = todos::validate(args.todos, config.max_items)?;
        state::set("todos", &todos)?;
        state::set("last_write", &ctx.model_calls())?;
        events::emit("todos-changed", &Changed { items: &todos });
        Ok(render::list(&todos))
    }

    fn stop(&self, ctx: &Context, _reply: &str) -> StopOutcome {
        stop::decide(&ctx.config().unwrap_or_default())
    }

    fn command(&self, _ctx: &Context, name: &str, _args: &str) -> Result<String, String> {
        if name != "todos" {
            return Err(format!("the todo-write plugin has no command named `/{name}`"));
        }
        Ok(render::list(&todos::load()?))
    }
}

/// A nudge each time the model has gone another `nag_after_rounds` model calls without
/// writing the list.
fn nag(config: &Config, model_calls: u64) -> Option<String> {
    if config.nag_after_rounds == 0 {
        return None;
    }
    let last_write: u64 = state::get("last_write").ok().flatten().unwrap_or(0);
    // Once per quiet stretch of `nag_after_rounds` calls, not on every call after it.
    let quiet = model_calls.saturating_sub(last_write);
    if quiet == 0 || !quiet.is_multiple_of(config.nag_after_rounds) {
        return None;
    }
    let list = todos::load().unwrap_or_default();
    Some(format!(
        "The TodoWrite list has not been updated for {} model calls. If it no longer matches your \
         progress, update it now. Current list:\n{}",
        quiet,
        render::list(&list)
    ))
}

/// The tool. The item limit is checked by the plugin, not the schema, so the model gets
/// our own explanation rather than a schema error.
fn tool_spec(config: &Config) -> ToolSpec {
    ToolSpec::new(
        "TodoWrite",
        &format!(
            "Replaces your todo list with the full list given (at most {} items). Send every item each \
             time, with its status.",
            config.max_items
        ),
    )
    .parameters_json(r#"{
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": { "type": "string", "description": "Keep an item's id when you resend it." },
                        "content": { "type": "string", "description": "What to do, e.g. \"Run the tests\"." },
                        "status": { "type": "string", "enum": ["pending", "in_progress", "completed"] },
                        "activeForm": { "type": "string", "description": "The step as ongoing work, e.g. \"Running the tests\"." }
                    },
                    "required": ["content", "status", "activeForm"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["todos"],
        "additionalProperties": false
    }"#)
}

export_plugin!(TodoWrite);
