//! The `todo` plugin: a todo list the model keeps with the `todos_*` tools, shown to it
//! before every model call, shown to the operator with `/todos` and to every front end as a
//! checklist view, and a stop hook that keeps the turn going while todos are still open (the
//! shared `completion-loop`).
//!
//! State (namespace `todo`): `items` = [{id, title, description?, isComplete}], `next_id`.
//! Every change emits `todos-changed` with `{"items": [...]}`, displayed as a checklist.

mod config;
mod item;
mod render;
mod tools;
mod view;

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

use agent_host_sdk::prelude::*;

use config::Config;
use item::TodoList;

/// The plugin's declaration.
pub fn plugin() -> Plugin<Config> {
    Plugin::new("todo", env!("CARGO_PKG_VERSION"))
        .configure(config::configure)
        .tool(Tool::new(
            "todos_add",
            "Adds todos to your list. Returns the new items with their ids.",
            tools::add,
        ))
        .tool(Tool::new(
            "todos_complete",
            "Marks todos as done, each with a short reason. Returns how many were newly completed.",
            tools::complete,
        ))
        .tool(Tool::new(
            "todos_remove",
            "Removes todos that no longer apply. Returns how many were removed.",
            tools::remove,
        ))
        .tool(Tool::new("todos_get_remaining", "Returns the open todos as JSON.", tools::get_remaining))
        .tool(Tool::new("todos_get_all", "Returns every todo, open and done, as JSON.", tools::get_all))
        .provide(provide)
        .on_stop_from_state(stop)
        .command(Command::new("todos", "/todos", "Shows the todo list", show))
        .view_from_state(view::view)
}

fn provide(ctx: &Context<Config>, contribution: Contribution) -> Contribution {
    let contribution = contribution.instructions(ctx.config.instructions.clone());
    if !ctx.config.inject_list {
        return contribution.reusable();
    }
    match TodoList::load() {
        // The list is state and the rest is config: reused until the list changes.
        Ok(list) => contribution.inject(render::list_message(&ctx.config, &list.items)).reusable(),
        Err(error) => {
            log::warn(&format!("cannot show the todo list: {error}"));
            contribution
        }
    }
}

fn stop(ctx: &Context<Config>) -> StopOutcome {
    ctx.config.completion.decide(|| {
        let list = TodoList::load()?;
        Ok(list.remaining().into_iter().map(|item| render::item_line(&ctx.config, item)).collect())
    })
}

fn show(_ctx: &Context<Config>, _args: &str) -> Result<String, String> {
    Ok(render::checklist(&TodoList::load()?.items))
}

agent_host_sdk::export_plugin!(plugin);
