//! `reuse.until-state-changes`.

use crate::runtime::call::CallState;

impl CallState {
    pub fn declare_reusable(&mut self) {
        // Only `provide` records its reads; anywhere else the declaration means nothing.
        self.reusable = self.reads.is_some();
    }
}
