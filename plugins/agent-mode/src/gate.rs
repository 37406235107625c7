//! The `pre-tool-use` rules that keep a read-only mode read-only:
//!
//! 1. a mutating tool is refused in a mode that forbids them;
//! 2. `mode_set` away from a mode the model may not leave on its own (`model_may_leave`)
//!    asks the operator first;
//! 3. a mutating tool later in the same reply as a switch out of a read-only mode is refused,
//!    although the mode has changed by then. The host runs a reply's calls one after another,
//!    each hook seeing the state the earlier calls left, so without this rule a reply
//!    `[mode_set execute, write_file …]` would write before anyone saw the switch.

use agent_host_sdk::prelude::*;

use crate::config::Config;
use crate::current;
use crate::modes::Mode;
use crate::tools::{SET_TOOL, SetArgs};

/// This plugin's name, as the host reports it in `tool-use.plugin`.
pub const PLUGIN: &str = "agent-mode";

/// The decision on one call; `None` is no opinion.
pub fn decide(config: &Config, model_calls: u64, call: &ToolUse) -> Result<Option<Decision>, String> {
    // An unknown stored mode is repaired by the next `provide`; until then the default rules.
    let mode = current::effective(config)?;
    if call.plugin == PLUGIN && call.call.name == SET_TOOL {
        return Ok(leaving(config, mode, call));
    }
    if !call.mutates {
        return Ok(None);
    }
    if !mode.allow_mutating {
        return Ok(Some(Decision::Deny(format!(
            "`{}` changes things, and the current mode `{}` allows only tools that do not. Keep to \
             read-only tools and finish this mode's workflow; ask the user to approve a switch to a \
             mode that allows changes if this step needs one.",
            call.call.name, mode.name
        ))));
    }
    if let Some(from) = current::left_read_only_in(model_calls)? {
        return Ok(Some(Decision::Deny(format!(
            "`{}` changes things, and this reply switched out of the read-only mode `{from}` before \
             it. Changes wait for a reply after the switch: call `{}` again in your next reply.",
            call.call.name, call.call.name
        ))));
    }
    Ok(None)
}

/// `mode_set` from `mode`: asks when the model may not leave `mode` by itself. A call that
/// would not switch (an unknown name, the current mode) is left to the tool to answer.
fn leaving(config: &Config, mode: &Mode, call: &ToolUse) -> Option<Decision> {
    let SetArgs { mode: target } = call.call.args().ok()?;
    if mode.model_may_leave() || target == mode.name || config.mode(&target).is_none() {
        return None;
    }
    Some(Decision::Ask(format!(
        "the model asks to switch from mode `{}` to `{target}`. `{}` is a mode the model may not leave on \
         its own{}; allow this only if you agreed to leave it.",
        mode.name,
        mode.name,
        if mode.allow_mutating { "" } else { " (it forbids tools that change things)" }
    )))
}
