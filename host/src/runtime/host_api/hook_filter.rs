//! `hook-filter.only` and `hook-filter.never`.

use crate::runtime::CallState;
use crate::runtime::HookDeclaration;

impl CallState {
    /// Records a declaration. Only `configure` records them (see `CallState::declarations`):
    /// a filter must hold for as long as the configuration it was derived from, no more.
    pub fn declare_hook_filter(&mut self, declaration: HookDeclaration) {
        if let Some(declared) = &mut self.declarations {
            declared.hook_filters.push(declaration);
        }
    }
}
