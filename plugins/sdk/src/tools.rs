//! Declaring tools by hand (contract 0.2.1). [`Plugin::tool`](crate::Plugin::tool) declares
//! every tool it is given from `configure` already; this is for a plugin that writes a
//! [`ToolSpec`] itself. Declare from `configure` only: anywhere else the host ignores it.

use crate::ToolSpec;
use crate::host::tools as raw;

/// Offers `tool` on every model call under this configuration; its calls go to
/// `call-tool`. The host checks its schema at load.
pub fn declare(tool: &ToolSpec) {
    raw::declare(tool)
}
