//! The completion loop a todo plugin offers: when the model ends a step while work is still
//! open, send it back with a reminder, unless the loop is off or the current mode is not one
//! it runs in. Each plugin declares the settings in its own config (serde's `flatten` does not
//! combine with `deny_unknown_fields`); what they mean is decided here, once.

use crate::StopOutcome;

/// The loop's settings, borrowed from a plugin's configuration.
pub struct LoopSettings<'a> {
    /// Keep the turn going while work is open.
    pub enabled: bool,
    /// The user message sent when the loop continues; must contain `{remaining_todos}`.
    pub continue_template: &'a str,
    /// Continue only while the mode (read from `mode_plugin`) is one of these.
    pub loop_modes: Option<&'a [String]>,
    /// The plugin whose `mode` key names the current mode.
    pub mode_plugin: Option<&'a str>,
}

impl LoopSettings<'_> {
    /// Checks the settings together; call it from `configure`.
    pub fn check(&self) -> Result<(), String> {
        if self.loop_modes.is_some() && self.mode_plugin.is_none() {
            return Err(
                "`loop_modes` needs `mode_plugin` to say which plugin holds the current mode".to_owned()
            );
        }
        if !self.continue_template.contains("{remaining_todos}") {
            return Err("`continue_template` must contain `{remaining_todos}`".to_owned());
        }
        Ok(())
    }

    /// Whether the loop may keep the turn going now: it is on and, with `loop_modes`, the
    /// mode plugin's current mode is one of them.
    pub fn may_continue(&self) -> bool {
        if !self.enabled {
            return false;
        }
        match (self.loop_modes, self.mode_plugin) {
            (Some(modes), Some(plugin)) => crate::state::mode_is_one_of(plugin, modes),
            _ => true,
        }
    }

    /// Continue the turn, listing what is still open.
    pub fn continue_with(&self, remaining_todos: &str) -> StopOutcome {
        StopOutcome::Continue(self.continue_template.replace("{remaining_todos}", remaining_todos))
    }
}
