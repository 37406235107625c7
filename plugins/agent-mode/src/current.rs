//! The session's current mode and the operator's pending switch notice, in the state bag.
//!
//! Keys (namespace `agent-mode`): `mode` = the current mode's name as a JSON string (absent
//! means the default mode); `default_mode` = the configured default, kept there for plugins
//! that read the mode from this namespace (the todo completion loop), which cannot see this
//! plugin's configuration; `pending_notice` = `{from, to}` of an operator switch the model
//! has not been told about yet; `left_read_only` = `{from, model_calls}` of the model's last
//! switch out of a mode that forbids mutating tools, so that the rest of the same reply stays
//! under that mode's rule.

use agent_host_sdk::prelude::*;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::modes::Mode;

/// An outside switch waiting to be announced on the next model call.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PendingNotice {
    pub from: String,
    pub to: String,
}

/// The model switched out of a read-only mode during the reply numbered `model_calls`
/// (`call-context.model-calls`, the same for every call of one reply and larger for each
/// later one).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LeftReadOnly {
    pub from: String,
    pub model_calls: u64,
}

/// Remembers that the model left the read-only mode `from` in the reply `model_calls`.
pub fn note_left_read_only(from: &str, model_calls: u64) -> Result<(), String> {
    state::set("left_read_only", &LeftReadOnly { from: from.to_owned(), model_calls })
}

/// The read-only mode the model left earlier in the reply `model_calls`, if it did.
pub fn left_read_only_in(model_calls: u64) -> Result<Option<String>, String> {
    Ok(state::get::<LeftReadOnly>("left_read_only")?
        .filter(|left| left.model_calls == model_calls)
        .map(|left| left.from))
}

/// Forgets the model's last switch out of a read-only mode (the operator has decided since).
pub fn forget_left_read_only() {
    state::remove("left_read_only");
}

/// Who made a switch, as the `mode-changed` event reports it.
#[derive(Clone, Copy)]
pub enum Switcher {
    Model,
    Operator,
    Host,
}

impl Switcher {
    fn as_str(self) -> &'static str {
        match self {
            Switcher::Model => "model",
            Switcher::Operator => "operator",
            Switcher::Host => "host",
        }
    }
}

/// The stored mode name, or the default when none is stored. May name a mode that is no
/// longer configured; `provide` repairs that.
pub fn stored(config: &Config) -> Result<String, String> {
    Ok(state::get::<String>("mode")?.unwrap_or_else(|| config.default_mode.clone()))
}

/// Seeds `default_mode` for the sessions created under `config` (called from `configure`).
pub fn seed_default(config: &Config) -> Result<(), String> {
    state::set("default_mode", &config.default_mode)
}

/// Writes the configured default mode to `default_mode` unless it is there already: in a
/// session made before this configuration was loaded (or by a host that does not seed), and
/// on the first model call after a reload that changed the default.
pub fn publish_default(config: &Config) -> Result<(), String> {
    if state::get::<String>("default_mode")?.as_deref() != Some(config.default_mode.as_str()) {
        state::set("default_mode", &config.default_mode)?;
    }
    Ok(())
}

/// The mode the session is in: the stored one while it is configured, else the default.
pub fn effective(config: &Config) -> Result<&Mode, String> {
    let stored = stored(config)?;
    config
        .mode(&stored)
        .or_else(|| config.mode(&config.default_mode))
        .ok_or_else(|| format!("the default mode `{}` is not configured", config.default_mode))
}

/// Stores `to` as the current mode and emits `mode-changed`. Returns false (and does
/// nothing) when `to` already is the current mode.
pub fn switch(from: &str, to: &str, by: Switcher) -> Result<bool, String> {
    if from == to {
        return Ok(false);
    }
    state::set("mode", to)?;
    // People see every switch once, in the view's `mode` choice; the event is for programs.
    events::emit("mode-changed", &json!({ "from": from, "to": to, "by": by.as_str() }), None);
    Ok(true)
}

/// Records an operator switch for the next model call. Consecutive switches fold into one
/// notice from the mode the model last knew; a switch back to it cancels the notice.
pub fn note_operator_switch(from: &str, to: &str) -> Result<(), String> {
    let known = state::get::<PendingNotice>("pending_notice")?.map_or_else(|| from.to_owned(), |p| p.from);
    if known == to {
        state::remove("pending_notice");
    } else {
        state::set("pending_notice", &PendingNotice { from: known, to: to.to_owned() })?;
    }
    Ok(())
}

/// Takes the pending notice, if any, so it is shown once.
pub fn take_notice() -> Result<Option<PendingNotice>, String> {
    let notice = state::get::<PendingNotice>("pending_notice")?;
    if notice.is_some() {
        state::remove("pending_notice");
    }
    Ok(notice)
}

/// Drops any pending notice without showing it.
pub fn discard_notice() {
    state::remove("pending_notice");
}

/// The message for an operator switch.
pub fn switch_message(notice: &PendingNotice) -> String {
    format!(
        "[Mode changed: the user switched the mode from `{}` to `{}`. Follow the `{}` workflow from now on.]",
        notice.from, notice.to, notice.to
    )
}

/// The message for a fallback after the mode set changed.
pub fn fallback_message(lost: &str, default: &str) -> String {
    format!(
        "[Mode changed: the mode `{lost}` is no longer configured, so the session fell back from `{lost}` to \
         `{default}`. Follow the `{default}` workflow from now on.]"
    )
}
