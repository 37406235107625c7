use crate::runtime::bindings::agent_host::plugin::hook_filter::{Host, ToolFilter, ToolHook};
use crate::runtime::call::CallState;
use crate::runtime::hook_filter::Reach;

// Only `configure` records declarations (see `CallState::hook_filters`): a filter must
// hold for as long as the configuration it was derived from, no more.
impl Host for CallState {
    fn only(&mut self, hook: ToolHook, filter: ToolFilter) {
        if let Some(filters) = &mut self.hook_filters {
            filters.declare(hook, Reach::Only(filter.into()));
        }
    }

    fn never(&mut self, hook: ToolHook) {
        if let Some(filters) = &mut self.hook_filters {
            filters.declare(hook, Reach::Never);
        }
    }
}
