//! The `todo` plugin: a todo list the model keeps with the `todos_*` tools, shown to it
//! before every model call, shown to the operator with `/todos`, and a stop hook that keeps
//! the turn going while todos are still open.
//!
//! State (namespace `todo`): `items` = [{id, title, description?, isComplete}], `next_id`.
//! Every change emits `todos-changed` with `{"items": [...]}`.

mod config;
mod item;
mod render;
mod stop;
mod tools;

use agent_host_sdk::prelude::*;

use config::Config;
use item::TodoList;

#[derive(Default)]
struct Todo;

impl Plugin for Todo {
    fn manifest(&self) -> Manifest {
        Manifest::new("todo", env!("CARGO_PKG_VERSION"))
            .with(Capabilities::PROVIDE | Capabilities::CALL_TOOL | Capabilities::STOP)
            .command("todos", "/todos", "Shows the todo list")
    }

    fn configure(&self, config: Value) -> Result<Value, String> {
        config::configure(config)
    }

    fn provide(&self, ctx: &Context) -> Contribution {
        let config: Config = ctx.config().unwrap_or_default();
        let mut contribution = Contribution::default().instructions(config.instructions.clone());
        for spec in tools::specs() {
            contribution = contribution.tool(spec);
        }
        if config.inject_list {
            match TodoList::load() {
                Ok(list) => contribution = contribution.inject(render::list_message(&config, &list.items)),
                Err(error) => {
                    log::warn(&format!("cannot show the todo list: {error}"));
                    return contribution;
                }
            }
        }
        // The list is state and the rest is config: reused until the list changes.
        contribution.reusable()
    }

    fn call_tool(&self, _ctx: &Context, call: ToolCall) -> Result<String, String> {
        tools::call(&call)
    }

    fn stop(&self, ctx: &Context, _reply: &str) -> StopOutcome {
        stop::decide(&ctx.config().unwrap_or_default())
    }

    fn command(&self, ctx: &Context, name: &str, _args: &str) -> Result<String, String> {
        if name != "todos" {
            return Err(format!("the todo plugin has no command named `/{name}`"));
        }
        let config: Config = ctx.config()?;
        let list = TodoList::load()?;
        Ok(render::list_message(&config, &list.items))
    }
}

export_plugin!(Todo);
