use serde::de::DeserializeOwned;

use crate::bindings::agent_host::plugin::types::CallContext;

/// Where a call runs: the plugin's typed configuration, the session, the turn's progress.
pub struct Context<C> {
    /// The configuration `configure` settled on, as the plugin's own type.
    pub config: C,
    /// The session this call belongs to (for display; state always goes to this session).
    pub session_id: String,
    /// Model calls this session has made so far.
    pub model_calls: u64,
    /// Model calls the current user turn has made so far.
    pub turn_iteration: u32,
    /// In a tool's handler, the id of the call it runs: what a `pre-compact` hook later finds
    /// its result by ([`history::result_of`](crate::history::result_of)). None in any other call.
    pub call_id: Option<String>,
}

impl<C: DeserializeOwned> Context<C> {
    /// Reads the host's call context; an error when the configuration no longer fits `C`
    /// (the plugin's config type changed under a running host).
    pub(crate) fn from_raw(raw: CallContext) -> Result<Self, String> {
        let config = serde_json::from_str(&raw.config)
            .map_err(|error| format!("the configuration does not fit: {error}"))?;
        Ok(Self {
            config,
            session_id: raw.session_id,
            model_calls: raw.model_calls,
            turn_iteration: raw.turn_iteration,
            call_id: None,
        })
    }
}

impl<C> Context<C> {
    /// A context for unit tests: `config`, an empty session id, no model calls yet.
    pub fn with_config(config: C) -> Self {
        Self { config, session_id: String::new(), model_calls: 0, turn_iteration: 0, call_id: None }
    }
}
