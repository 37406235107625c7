//! `agent-host acp`: the host as an Agent Client Protocol (v1) agent over stdio, the front
//! end an editor starts as a subprocess. stdout carries the protocol only; logs go to stderr.
//!
//! The same host, store, plugins, hooks and sandbox as the console and `serve`; what a
//! session shows (plan, modes) is drawn from the plugins' views only.

mod approver;
mod children;
mod commands;
mod handlers;
mod history;
mod lines;
mod mcp;
mod prompt;
mod server;
mod sessions;
mod takes;
mod tool_kind;
mod transport;
mod updates;
mod views;

use std::sync::Arc;

use agent_host::agent::Host;

pub use lines::MAX_LINE_BYTES;

/// Serves ACP on stdin/stdout until the client closes the connection.
pub async fn run(host: Arc<Host>) -> anyhow::Result<()> {
    server::serve(host).await
}
