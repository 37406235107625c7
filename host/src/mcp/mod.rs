//! MCP servers: tools from outside the sandbox, offered to the model beside the plugins'
//! and run through the same path — schema validation, the `pre-tool-use` and
//! `post-tool-use` hooks, permission rules, plan mode, approvals, the result cap.
//!
//! Each `[[mcp]]` entry is one [`McpServer`]: a program the host starts and speaks to over
//! stdio, or a streamable HTTP endpoint, through the official Rust SDK (`rmcp`) behind
//! this module. Its tools are offered as `mcp__<server>__<tool>` ([`McpTool`]), mutating
//! unless the server marks them read-only. The servers of a config form an [`McpSet`],
//! swapped with the plugins by a reload.

mod capped;
mod content;
mod handler;
mod launch;
mod server;
mod set;
mod tools;

pub use server::{McpServer, ServerState, ServerStatus};
pub use set::{McpSet, Started, event, private_folder};
pub use tools::{McpTool, offered_name};
