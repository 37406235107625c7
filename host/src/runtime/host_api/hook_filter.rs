//! `hook-filter.only` and `hook-filter.never`.

use crate::runtime::call::{CallState, HookDeclaration};

impl CallState {
    /// Records a declaration. Only `configure` records them (see `CallState::hook_filters`):
    /// a filter must hold for as long as the configuration it was derived from, no more.
    pub fn declare_hook_filter(&mut self, declaration: HookDeclaration) {
        if let Some(declared) = &mut self.hook_filters {
            declared.push(declaration);
        }
    }
}
