//! The completion loop: while items are not completed, send the model back to work, unless
//! the loop is off or the current mode is not one it runs in.

use agent_host_sdk::prelude::*;

use crate::config::Config;
use crate::render;
use crate::todos::{self, Status};

/// Stop or continue, after the model's final text of a step.
pub fn decide(config: &Config) -> StopOutcome {
    if !config.loop_enabled || !mode_allows_loop(config) {
        return StopOutcome::Stop;
    }
    let todos = match todos::load() {
        Ok(todos) => todos,
        Err(error) => {
            log::warn(&format!("cannot read the todos, letting the turn end: {error}"));
            return StopOutcome::Stop;
        }
    };
    let open: Vec<_> = todos.iter().filter(|t| t.status != Status::Completed).collect();
    if open.is_empty() {
        return StopOutcome::Stop;
    }
    let text = render::lines(open).join("\n");
    StopOutcome::Continue(config.continue_template.replace("{remaining_todos}", &text))
}

/// True without `loop_modes`; otherwise only when the mode plugin's current mode is listed.
fn mode_allows_loop(config: &Config) -> bool {
    match (&config.loop_modes, &config.mode_plugin) {
        (Some(modes), Some(plugin)) => state::mode_is_one_of(plugin, modes),
        _ => true,
    }
}
