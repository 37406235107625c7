//! Which tool calls your `pre_tool_use` and `post_tool_use` hooks need to see (contract
//! 0.1.2). Declare it in [`Plugin::configure`](crate::Plugin::configure), from the
//! configuration you accept; the host then skips the hook for every other call, as if it
//! had answered "no opinion" / "no replacement". Without a declaration a hook sees every
//! call. Declarations made anywhere but `configure` are ignored.
//!
//! ```ignore
//! fn configure(_config: &mut Config) -> Result<Vec<Requirement>, String> {
//!     // This policy only ever looks at tools that change things.
//!     hook_filter::only(ToolHook::PreToolUse, &ToolFilter::mutating_only());
//!     Ok(Vec::new())
//! }
//! ```

pub use crate::bindings::agent_host::plugin::hook_filter::{ToolFilter, ToolHook};
use crate::host::hook_filter as raw;

/// Calls `hook` only for the tool calls `filter` lets through.
pub fn only(hook: ToolHook, filter: &ToolFilter) {
    raw::only(hook, filter)
}

/// Never calls `hook`: under this configuration it has nothing to do.
pub fn never(hook: ToolHook) {
    raw::never(hook)
}

impl ToolFilter {
    /// Every tool call (the start for narrowing with the methods below).
    pub fn any() -> Self {
        Self { mutating_only: false, tools: Vec::new(), except_tools: Vec::new(), output_longer_than: None }
    }

    /// Only calls of tools that change things (`mutates`).
    pub fn mutating_only() -> Self {
        Self { mutating_only: true, ..Self::any() }
    }

    /// Only calls of these tools. A name may hold `*` (any run of characters) and `?` (one
    /// character).
    pub fn tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.tools = names.into_iter().map(Into::into).collect();
        self
    }

    /// Never calls of these tools, even when [`tools`](Self::tools) names them; patterns as
    /// there.
    pub fn except_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.except_tools = names.into_iter().map(Into::into).collect();
        self
    }

    /// For `post_tool_use`: only results whose output is longer than `bytes`.
    pub fn output_longer_than(mut self, bytes: u32) -> Self {
        self.output_longer_than = Some(bytes);
        self
    }
}
