//! The plugin's `[plugin.config]`: validated once by `configure`, with defaults filled in.

use agent_host_sdk::completion_loop::LoopSettings;
use agent_host_sdk::prelude::*;
use agent_host_sdk::serde_json;
use serde::{Deserialize, Serialize};

const DEFAULT_INSTRUCTIONS: &str = "\
Track multi-step work with the TodoWrite tool. Each call sends the whole list: every item \
with its content (what to do), activeForm (the same step phrased as ongoing work, e.g. \
\"Running the tests\") and status (pending, in_progress or completed). Skip the list for \
small one-step requests. Keep one item in_progress at a time, and mark items completed as \
soon as they are done rather than in a batch at the end.";

const DEFAULT_CONTINUE: &str = "\
Some todos are not completed yet:
{remaining_todos}
Keep working on them, and update the list with TodoWrite as you go.";

/// The normalized configuration every call sees.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Guidance for the system prompt.
    pub instructions: String,
    /// The longest list one TodoWrite call may send.
    pub max_items: usize,
    /// Remind the model after this many model calls without a write; 0 turns it off.
    pub nag_after_rounds: u64,
    /// Keep the turn going while items are not completed.
    pub loop_enabled: bool,
    /// The user message sent when the loop continues; must contain `{remaining_todos}`.
    pub continue_template: String,
    /// Continue only while the mode (read from `mode_plugin`) is one of these.
    pub loop_modes: Option<Vec<String>>,
    /// The plugin whose `mode` key names the current mode.
    pub mode_plugin: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            instructions: DEFAULT_INSTRUCTIONS.to_owned(),
            max_items: 20,
            nag_after_rounds: 10,
            loop_enabled: true,
            continue_template: DEFAULT_CONTINUE.to_owned(),
            loop_modes: None,
            mode_plugin: None,
        }
    }
}

impl Config {
    /// The completion-loop settings, as the SDK reads them.
    pub fn completion_loop(&self) -> LoopSettings<'_> {
        LoopSettings {
            enabled: self.loop_enabled,
            continue_template: &self.continue_template,
            loop_modes: self.loop_modes.as_deref(),
            mode_plugin: self.mode_plugin.as_deref(),
        }
    }
}

/// Parses and checks the raw config table.
pub fn configure(raw: Value) -> Result<Value, String> {
    let raw = if raw.is_null() { json!({}) } else { raw };
    let config: Config =
        serde_json::from_value(raw).map_err(|error| format!("todo-write configuration: {error}"))?;
    if config.max_items == 0 {
        return Err("`max_items` must be at least 1".to_owned());
    }
    config.completion_loop().check()?;
    serde_json::to_value(&config).map_err(|error| error.to_string())
}
