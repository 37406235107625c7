use serde_json::value::RawValue;

use crate::events::Payload;
use crate::runtime::bindings::agent_host::plugin::events::Host;
use crate::runtime::call::CallState;

impl Host for CallState {
    fn emit(&mut self, kind: String, payload: String) -> wasmtime::Result<()> {
        self.caps.event(&kind, self.events.len() + 1, payload.len())?;
        match RawValue::from_string(payload) {
            Ok(json) => self.events.push((kind, Payload::from(json))),
            Err(_) => tracing::warn!(plugin = %self.plugin, kind, "event dropped: its payload is not JSON"),
        }
        Ok(())
    }
}
