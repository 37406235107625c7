use serde::de::DeserializeOwned;

use crate::bindings::agent_host::plugin::types::CallContext;

/// Where a call runs: the session, the plugin's configuration, the turn's progress.
pub struct Context {
    raw: CallContext,
}

impl Context {
    pub(crate) fn new(raw: CallContext) -> Self {
        Self { raw }
    }

    /// The session this call belongs to (for display; state always goes to this session).
    pub fn session_id(&self) -> &str {
        &self.raw.session_id
    }

    /// The configuration `configure` returned, deserialized into `T`.
    pub fn config<T: DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_str(&self.raw.config)
            .map_err(|error| format!("plugin configuration does not fit: {error}"))
    }

    /// Model calls this session has made so far.
    pub fn model_calls(&self) -> u64 {
        self.raw.model_calls
    }

    /// Model calls the current user turn has made so far.
    pub fn turn_iteration(&self) -> u32 {
        self.raw.turn_iteration
    }
}
