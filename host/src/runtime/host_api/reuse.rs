//! `reuse.until-state-changes`.

use crate::runtime::call::CallState;

impl CallState {
    pub fn declare_reusable(&mut self) {
        // Only a call whose result may be kept (`provide`, `view`, `stop`) records its reads;
        // anywhere else the declaration means nothing.
        self.reusable = self.reads.is_some();
    }
}
