//! The `todo-write` plugin: the model keeps its plan with one `TodoWrite` tool that sends the
//! whole list each time. A reminder on the session's first model call, a nudge after
//! `nag_after_rounds` model calls without a write, `/todos`, `todos-changed` events
//! (displayed as a checklist), a checklist view for every front end and the same completion
//! loop as the `todo` plugin.
//!
//! State (namespace `todo-write`): `todos` = [{id, content, status, activeForm}], `next_id`,
//! `last_write` (the model calls the session had made at the last write, the one whose reply
//! wrote included).

mod config;
mod render;
mod todos;
mod view;

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

use agent_host_sdk::prelude::*;
use serde::Deserialize;

use config::Config;
use todos::{Status, TodoInput};

const REMINDER: &str =
    "If this work takes several steps, plan it with TodoWrite and keep the list current as you go.";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    todos: Vec<TodoInput>,
}

/// The plugin's declaration.
pub fn plugin() -> Plugin<Config> {
    Plugin::new("todo-write", env!("CARGO_PKG_VERSION"))
        .configure(config::configure)
        // The item limit is checked by the plugin, not the schema, so the model gets our own
        // explanation rather than a schema error.
        .tool(Tool::new("TodoWrite", "", write).described_by(|config| {
            format!(
                "Replaces your todo list with the full list given (at most {} items). Send every item \
                 each time, with its status.",
                config.max_items
            )
        }))
        .provide(provide)
        .on_stop_from_state(stop)
        .command(Command::new("todos", "/todos", "Shows the TodoWrite list", show))
        .view_from_state(view::view)
}

fn provide(ctx: &Context<Config>, contribution: Contribution) -> Contribution {
    let contribution = contribution.instructions(ctx.config.instructions.clone());
    if ctx.model_calls == 0 {
        return contribution.inject(REMINDER);
    }
    match nag(&ctx.config, ctx.model_calls) {
        Some(nag) => contribution.inject(nag),
        None => contribution,
    }
}

fn write(ctx: &Context<Config>, args: WriteArgs) -> Result<String, String> {
    let todos = todos::validate(args.todos, ctx.config.max_items)?;
    let items = state::set_kept("todos", &todos)?;
    state::set("last_write", &calls_made(ctx))?;
    // People see the change in the view; the event is for programs (`--json`).
    events::emit_json("todos-changed", &format!(r#"{{"items":{items}}}"#), None);
    Ok(render::list(&todos))
}

fn stop(ctx: &Context<Config>) -> StopOutcome {
    ctx.config.completion.decide(|| {
        let todos = todos::load()?;
        Ok(render::lines(todos.iter().filter(|t| t.status != Status::Completed)))
    })
}

fn show(_ctx: &Context<Config>, _args: &str) -> Result<String, String> {
    Ok(render::checklist(&todos::load()?))
}

/// The model calls the session has made by the time of a tool call, counting the one whose
/// reply asked for it: a reply's tool calls see the count from before that model call (it
/// stays the same for the whole round trip), while a direct call or an operator's command,
/// outside any round trip (`turn_iteration` 0), sees the count as it is.
fn calls_made(ctx: &Context<Config>) -> u64 {
    if ctx.turn_iteration > 0 { ctx.model_calls + 1 } else { ctx.model_calls }
}

/// A nudge each time the model has gone another `nag_after_rounds` model calls without
/// writing the list. `model_calls` is the count before the call being prepared.
fn nag(config: &Config, model_calls: u64) -> Option<String> {
    if config.nag_after_rounds == 0 {
        return None;
    }
    let last_write: u64 = state::get("last_write").ok().flatten().unwrap_or(0);
    // The calls made since the write, none of which wrote. Once per quiet stretch of
    // `nag_after_rounds` calls, not on every call after it.
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

agent_host_sdk::export_plugin!(plugin);
