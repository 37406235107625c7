//! The config, plugin set and MCP servers a model round trip runs on, taken together once.

use std::sync::Arc;

use super::PluginSet;
use crate::config::Config;
use crate::mcp::McpSet;

/// What serves one round trip from start to end: its prompt, tools, hooks and settings all
/// come from here, so a reload that lands meanwhile applies from the next round trip on,
/// never to half of this one. A reload swaps every part at once.
#[derive(Clone)]
pub struct Snapshot {
    pub config: Arc<Config>,
    pub plugins: Arc<PluginSet>,
    pub mcp: Arc<McpSet>,
}
