//! `events.emit`.

use serde_json::value::RawValue;

use crate::events::Payload;
use crate::runtime::call::{CallState, EmittedEvent};

impl CallState {
    /// Keeps an event for delivery when the call succeeds. Its display text counts toward
    /// the payload cap: both are held by the host and shown to someone.
    pub fn emit(&mut self, kind: String, payload: String, display: Option<String>) -> wasmtime::Result<()> {
        let bytes = payload.len() + display.as_ref().map_or(0, String::len);
        self.caps.event(&kind, self.events.len() + 1, bytes)?;
        match RawValue::from_string(payload) {
            Ok(json) => self.events.push(EmittedEvent { kind, payload: Payload::from(json), display }),
            Err(_) => tracing::warn!(plugin = %self.plugin, kind, "event dropped: its payload is not JSON"),
        }
        Ok(())
    }
}
