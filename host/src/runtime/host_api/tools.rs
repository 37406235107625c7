//! `tools.declare`.

use crate::runtime::{CallState, ToolSpec};

impl CallState {
    /// Records a declared tool. Only `configure` records them (see `CallState::declarations`);
    /// anywhere else the declaration means nothing. A declaration past the bounds traps the
    /// call, naming the plugin and the bound.
    pub fn declare_tool(&mut self, tool: ToolSpec) -> wasmtime::Result<()> {
        let Some(declared) = &mut self.declarations else { return Ok(()) };
        declared
            .declare_tool(tool)
            .map_err(|bound| wasmtime::Error::msg(format!("plugin {} {bound}", self.plugin)))
    }
}
