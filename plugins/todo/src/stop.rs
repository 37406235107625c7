//! The completion loop: when the model ends a step while todos are still open, send it back
//! to work with a reminder, unless the loop is off or the current mode is not one it runs in.

use agent_host_sdk::prelude::*;

use crate::config::Config;
use crate::item::TodoList;
use crate::render;

/// Stop or continue, after the model's final text of a step.
pub fn decide(config: &Config) -> StopOutcome {
    let settings = config.completion_loop();
    if !settings.may_continue() {
        return StopOutcome::Stop;
    }
    let list = match TodoList::load() {
        Ok(list) => list,
        Err(error) => {
            log::warn(&format!("cannot read the todo list, letting the turn end: {error}"));
            return StopOutcome::Stop;
        }
    };
    let remaining = list.remaining();
    if remaining.is_empty() {
        return StopOutcome::Stop;
    }
    let text = render::lines(config, remaining);
    settings.continue_with(&text)
}
