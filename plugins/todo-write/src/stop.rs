//! The completion loop: while items are not completed, send the model back to work, unless
//! the loop is off or the current mode is not one it runs in.

use agent_host_sdk::prelude::*;

use crate::config::Config;
use crate::render;
use crate::todos::{self, Status};

/// Stop or continue, after the model's final text of a step.
pub fn decide(config: &Config) -> StopOutcome {
    let settings = config.completion_loop();
    if !settings.may_continue() {
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
    settings.continue_with(&text)
}
