//! The completion loop a todo plugin offers: when the model ends a step while work is still
//! open, send it back with a reminder, unless the loop is off or the current mode is not one
//! it runs in. A plugin keeps the settings as a nested `[plugin.config.loop]` table:
//!
//! ```toml
//! [plugin.config.loop]
//! enabled = true                      # keep the turn going while work is open
//! continue_template = "…{remaining_todos}…"
//! modes = ["execute"]                 # only in these modes, read from…
//! mode_plugin = "agent-mode"          # …this plugin's state (needs a read_state grant)
//! ```
//!
//! The mode plugin's state says the current mode in its `mode` key; while that is absent (no
//! switch yet), its `default_mode` key says the mode a session starts in.

use agent_host_sdk::{Requirement, StopOutcome, log, state};
use serde::{Deserialize, Serialize};

/// The placeholder `continue_template` must hold.
pub const REMAINING: &str = "{remaining_todos}";

/// The `[plugin.config.loop]` table. Unknown keys are errors that name them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoopConfig {
    /// Keep the turn going while work is open.
    pub enabled: bool,
    /// The user message sent when the loop continues; holds `{remaining_todos}`. None means
    /// the plugin's own default, filled in by [`LoopConfig::settle`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_template: Option<String>,
    /// Continue only while the current mode is one of these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modes: Option<Vec<String>>,
    /// The plugin whose `mode` key names the current mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode_plugin: Option<String>,
}

impl Default for LoopConfig {
    fn default() -> Self {
        Self { enabled: true, continue_template: None, modes: None, mode_plugin: None }
    }
}

impl LoopConfig {
    /// Checks the settings together and fills in `default_template`; call it from
    /// `configure`. Returns what the loop needs from the host: reading the mode plugin's
    /// state when `modes` is set.
    pub fn settle(&mut self, default_template: &str) -> Result<Vec<Requirement>, String> {
        let template = self.continue_template.get_or_insert_with(|| default_template.to_owned());
        if !template.contains(REMAINING) {
            return Err(format!("`loop.continue_template` must contain `{REMAINING}`"));
        }
        match (&self.modes, &self.mode_plugin) {
            (Some(_), None) => {
                Err("`loop.modes` needs `loop.mode_plugin` to say which plugin holds the current mode"
                    .to_owned())
            }
            (Some(_), Some(plugin)) => Ok(vec![Requirement::ReadsState(plugin.clone())]),
            (None, _) => Ok(Vec::new()),
        }
    }

    /// Whether the loop may keep the turn going now: it is on and, with `modes`, the mode
    /// plugin's current mode (its stored mode, else its default) is one of them. A mode
    /// plugin that says neither is in no mode; an unreadable mode counts as "not one of them"
    /// and is logged, since the loop would otherwise silently stay off.
    pub fn runs_now(&self) -> bool {
        if !self.enabled {
            return false;
        }
        let (Some(modes), Some(plugin)) = (&self.modes, &self.mode_plugin) else { return true };
        let mode = match state::read::<String>(plugin, "mode") {
            Ok(None) => state::read::<String>(plugin, "default_mode"),
            stored => stored,
        };
        match mode {
            Ok(Some(mode)) => modes.contains(&mode),
            Ok(None) => false,
            Err(error) => {
                log::warn(&format!("cannot read the current mode of `{plugin}`: {error}"));
                false
            }
        }
    }

    /// Stop, or continue listing `remaining` (one line per open item) when the loop runs
    /// now and something is open. `remaining` is only asked for when the loop runs.
    pub fn decide(&self, remaining: impl FnOnce() -> Result<Vec<String>, String>) -> StopOutcome {
        if !self.runs_now() {
            return StopOutcome::Stop;
        }
        let lines = match remaining() {
            Ok(lines) => lines,
            Err(error) => {
                log::warn(&format!("cannot read the open work, letting the turn end: {error}"));
                return StopOutcome::Stop;
            }
        };
        if lines.is_empty() {
            return StopOutcome::Stop;
        }
        let template = self.continue_template.as_deref().unwrap_or(REMAINING);
        StopOutcome::Continue(template.replace(REMAINING, &lines.join("\n")))
    }
}

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;
