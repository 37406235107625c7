//! Tool calls as every layer that touches them sees them: a call the model made, how it
//! ended, a tool's compiled schema, the cap on a result's text and the policy for call ids.
//! Plain types below the conversation, the model clients, the plugins, the MCP servers and
//! the loop alike, so a call is one type on its way through and plugins and MCP servers are
//! peers that each run it. It imports nothing from the rest of the crate.

pub mod call_ids;
mod output;
mod schema;

use serde::{Deserialize, Serialize};

pub use output::cap_text;
pub use schema::CompiledSchema;

/// A tool call as the model made it: stored in the history, sent back to the model, run by
/// a plugin or an MCP server. `arguments` is the model's raw text: it may not be JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments object, as JSON text.
    pub arguments: String,
}

/// How a tool call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub ok: bool,
    pub output: String,
}
