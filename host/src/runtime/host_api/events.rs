use serde_json::value::RawValue;

use crate::events::Payload;
use crate::runtime::bindings::agent_host::plugin::events::Host;
use crate::runtime::call::{CallState, MAX_EVENTS_PER_CALL};

impl Host for CallState {
    fn emit(&mut self, kind: String, payload: String) {
        if self.events.len() >= MAX_EVENTS_PER_CALL {
            tracing::warn!(plugin = %self.plugin, "event dropped: more than {MAX_EVENTS_PER_CALL} in one call");
            return;
        }
        match RawValue::from_string(payload) {
            Ok(json) => self.events.push((kind, Payload::from(json))),
            Err(_) => tracing::warn!(plugin = %self.plugin, kind, "event dropped: its payload is not JSON"),
        }
    }
}
