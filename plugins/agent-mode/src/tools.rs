//! The model's tools: `mode_get` and `mode_set`. They only touch the agent's own
//! bookkeeping, so they stay available in every mode. `mode_set` is offered as `mutating`
//! while the current mode is one the model may not leave on its own: leaving it widens what
//! may change, so the host's approval machinery (and this plugin's `pre-tool-use`, which
//! sees only mutating calls) treats the switch like a change.

use agent_host_sdk::prelude::*;
use serde::Deserialize;

use crate::config::Config;
use crate::current::{self, Switcher};
use crate::modes::Mode;

/// The tool that switches the mode.
pub const SET_TOOL: &str = "mode_set";

/// The arguments of `mode_set`.
#[derive(Deserialize)]
pub struct SetArgs {
    pub mode: String,
}

/// The tool specs in `current` mode; `mode_set` lists the configured names in its schema.
pub fn specs(config: &Config, current: &Mode) -> Vec<ToolSpec> {
    let set = ToolSpec::new(
        SET_TOOL,
        "Switches to another mode. Use it only when the user has explicitly allowed the switch.",
    )
    .parameters(json!({
        "type": "object",
        "properties": {
            "mode": {
                "type": "string",
                "description": format!("The mode to switch to, exactly as named: {}", config.names())
            }
        },
        "required": ["mode"],
        "additionalProperties": false
    }));
    let set = if current.model_may_leave() { set } else { set.mutating() };
    vec![ToolSpec::new("mode_get", "Returns the mode you are working in now."), set]
}

/// Runs one tool call.
pub fn call(config: &Config, ctx: &Context, call: &ToolCall) -> Result<String, String> {
    match call.name.as_str() {
        "mode_get" => current::stored(config),
        SET_TOOL => {
            let SetArgs { mode } = call.args()?;
            if config.mode(&mode).is_none() {
                return Err(format!("unknown mode `{mode}`; the supported modes are {}", config.names()));
            }
            let from = current::stored(config)?;
            // The model knows about its own switch, so no notice is queued, and an older
            // operator notice would now describe a state the model has moved past.
            if current::switch(&from, &mode, Switcher::Model)?
                && config.mode(&from).is_some_and(|left| !left.allow_mutating)
            {
                current::note_left_read_only(&from, ctx.model_calls())?;
            }
            current::discard_notice();
            Ok(format!("Mode is now {mode}."))
        }
        other => Err(format!("the agent-mode plugin has no tool named `{other}`")),
    }
}
