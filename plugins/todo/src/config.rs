//! The plugin's `[plugin.config]`: validated once by `configure`, with defaults filled in.

use agent_host_sdk::completion_loop::LoopSettings;
use agent_host_sdk::prelude::*;
use agent_host_sdk::serde_json;
use serde::{Deserialize, Serialize};

/// Guidance for the model when the operator does not supply `instructions`.
const DEFAULT_INSTRUCTIONS: &str = "\
You can keep a todo list with the todos_* tools. Use it with judgement:
- If a request is simple (one or two obvious steps), just do it; no list is needed.
- If it is complex or has several parts, break it into todos first, then work through them.
- If the request is unclear, ask the user to clarify before planning.
- When the user gives feedback, adjust the list to match: add, remove or reword todos.
- Mark each todo complete as soon as it is done, not all at the end.
- Remove todos that no longer apply.
- When the user moves on to a different topic, clear out the old list and start fresh.";

/// What the stop hook says while todos are still open.
const DEFAULT_CONTINUE: &str = "\
You are not finished: these todos are still open:
{remaining_todos}
Carry on with them. Mark each one complete when it is done, or remove it if it no longer applies.";

/// The normalized configuration every call sees.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Inject the current list before every model call.
    pub inject_list: bool,
    /// How one item is rendered; placeholders `{id}` `{status}` `{title}` `{description}`.
    /// None means the built-in `- {id} [{status}] {title}: {description}` form.
    pub item_template: Option<String>,
    /// Guidance for the system prompt.
    pub instructions: String,
    /// Keep the turn going while todos remain open.
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
            inject_list: true,
            item_template: None,
            instructions: DEFAULT_INSTRUCTIONS.to_owned(),
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
        serde_json::from_value(raw).map_err(|error| format!("todo configuration: {error}"))?;
    config.completion_loop().check()?;
    serde_json::to_value(&config).map_err(|error| error.to_string())
}
