//! The model's tools: `mode_get` and `mode_set`. Neither is `mutating`: they only touch the
//! agent's own bookkeeping, so they stay available in every mode.

use agent_host_sdk::prelude::*;
use serde::Deserialize;

use crate::config::Config;
use crate::current::{self, Switcher};

#[derive(Deserialize)]
struct SetArgs {
    mode: String,
}

/// The tool specs; `mode_set` lists the configured names in its schema.
pub fn specs(config: &Config) -> Vec<ToolSpec> {
    vec![
        ToolSpec::new("mode_get", "Returns the mode you are working in now."),
        ToolSpec::new(
            "mode_set",
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
        })),
    ]
}

/// Runs one tool call.
pub fn call(config: &Config, call: &ToolCall) -> Result<String, String> {
    match call.name.as_str() {
        "mode_get" => current::stored(config),
        "mode_set" => {
            let SetArgs { mode } = call.args()?;
            if config.mode(&mode).is_none() {
                return Err(format!("unknown mode `{mode}`; the supported modes are {}", config.names()));
            }
            let from = current::stored(config)?;
            // The model knows about its own switch, so no notice is queued, and an older
            // operator notice would now describe a state the model has moved past.
            current::switch(&from, &mode, Switcher::Model)?;
            current::discard_notice();
            Ok(format!("Mode is now {mode}."))
        }
        other => Err(format!("the agent-mode plugin has no tool named `{other}`")),
    }
}
