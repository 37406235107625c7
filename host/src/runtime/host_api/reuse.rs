use crate::runtime::bindings::agent_host::plugin::reuse::Host;
use crate::runtime::call::CallState;

impl Host for CallState {
    fn until_state_changes(&mut self) {
        // Only `provide` records its reads; anywhere else the declaration means nothing.
        self.reusable = self.reads.is_some();
    }
}
