//! The plugin's `[plugin.config]`: checked once by `configure`, with defaults filled in.

use std::collections::BTreeSet;

use agent_host_sdk::prelude::*;
use serde::{Deserialize, Serialize};

use crate::current;
use crate::modes::{DEFAULT_TEMPLATE, Mode, default_modes, render_modes};

/// The normalized configuration every call sees. Each `[[plugin.config.modes]]` entry has
/// `name`, `description`, `allow_mutating` (default true: whether tools marked `mutates` may
/// run) and `model_may_leave` (default: `allow_mutating`; false means the model's `mode_set`
/// away from the mode asks the operator first). A config written before `model_may_leave`
/// existed loads unchanged and gets the default.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The system-prompt section; must contain `{available_modes}` and `{current_mode}`.
    /// The stock template and modes are left out of the settled configuration: the host
    /// hands it to every call, and each instance parses it.
    #[serde(skip_serializing_if = "is_default_template")]
    pub template: String,
    /// The modes, in the order they are shown.
    #[serde(skip_serializing_if = "is_default_modes")]
    pub modes: Vec<Mode>,
    /// The mode a session starts in, and falls back to.
    pub default_mode: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            template: DEFAULT_TEMPLATE.to_owned(),
            modes: default_modes(),
            default_mode: "plan".to_owned(),
        }
    }
}

fn is_default_template(template: &str) -> bool {
    template == DEFAULT_TEMPLATE
}

/// Whether `modes` are the stock ones, as `configure` leaves them or as they are read back.
fn is_default_modes(modes: &[Mode]) -> bool {
    let stock = default_modes();
    modes.len() == stock.len()
        && modes.iter().zip(&stock).all(|(mode, stock)| {
            mode.name == stock.name
                && mode.description == stock.description
                && mode.allow_mutating == stock.allow_mutating
                && mode.model_may_leave() == stock.model_may_leave()
        })
}

impl Config {
    /// The mode called `name` (exact, case-sensitive match).
    pub fn mode(&self, name: &str) -> Option<&Mode> {
        self.modes.iter().find(|mode| mode.name == name)
    }

    /// The mode names, for error messages: "`plan`, `execute`".
    pub fn names(&self) -> String {
        self.modes.iter().map(|mode| format!("`{}`", mode.name)).collect::<Vec<_>>().join(", ")
    }

    /// The instructions for the system prompt in `current` mode: the template with its
    /// `{available_modes}` filled in, then every `{current_mode}` (the modes' own texts
    /// included). One pass over the template, not a search for each placeholder in turn.
    pub fn instructions(&self, current: &str) -> String {
        const MODES: &str = "{available_modes}";
        const CURRENT: &str = "{current_mode}";
        // `configure` checked that the template holds `{available_modes}`.
        let modes = render_modes(&self.modes).replace(CURRENT, current);
        let mut out = String::with_capacity(self.template.len() + modes.len());
        let mut rest = self.template.as_str();
        while let Some(brace) = rest.find('{') {
            out.push_str(&rest[..brace]);
            rest = &rest[brace..];
            if let Some(after) = rest.strip_prefix(MODES) {
                out.push_str(&modes);
                rest = after;
            } else if let Some(after) = rest.strip_prefix(CURRENT) {
                out.push_str(current);
                rest = after;
            } else {
                out.push('{');
                rest = &rest[1..];
            }
        }
        out.push_str(rest);
        out
    }
}

/// Checks the parsed table and fills in each mode's `model_may_leave`, so every later call
/// sees a value.
pub fn configure(config: &mut Config) -> Result<Vec<Requirement>, String> {
    // The mode's rules are about tools that change things (and `mode_set` while it counts as
    // one, see `tools`); the others need no call.
    hook_filter::only(ToolHook::PreToolUse, &ToolFilter::mutating_only());
    validate(config)?;
    for mode in &mut config.modes {
        mode.model_may_leave = Some(mode.model_may_leave());
    }
    // Every session created under this configuration starts with its default mode in
    // `default_mode` (contract 0.2.10), so `provide` need not write it: its contribution is
    // reusable from a session's first model call, and shared by every new session.
    current::seed_default(config)?;
    Ok(Vec::new())
}

fn validate(config: &Config) -> Result<(), String> {
    if config.modes.is_empty() {
        return Err("`modes` is empty: configure at least one mode".to_owned());
    }
    let mut seen = BTreeSet::new();
    for (index, mode) in config.modes.iter().enumerate() {
        if mode.name.trim().is_empty() {
            return Err(format!("`modes[{index}].name` is blank: every mode needs a name"));
        }
        if mode.description.trim().is_empty() {
            return Err(format!(
                "`modes[{index}].description` is blank: mode `{}` needs a description",
                mode.name
            ));
        }
        if !seen.insert(mode.name.as_str()) {
            return Err(format!("`modes` names `{}` more than once: mode names must be unique", mode.name));
        }
    }
    if config.mode(&config.default_mode).is_none() {
        return Err(format!(
            "`default_mode` is `{}`, which is not one of the configured modes ({})",
            config.default_mode,
            config.names()
        ));
    }
    for placeholder in ["{available_modes}", "{current_mode}"] {
        if !config.template.contains(placeholder) {
            return Err(format!("`template` must contain `{placeholder}`"));
        }
    }
    Ok(())
}
