//! agent-host: an LLM agent loop whose behaviour lives in sandboxed WebAssembly plugins.
//!
//! The folders follow the architecture (see docs/architecture.md):
//! - [`agent`]: the loop — one user turn, model round trips, tool calls through hooks;
//! - [`plugins`]: plugins as the host sees them — registry, loading, contract versions, types;
//! - [`runtime`]: the sandbox — wasmtime engine, limits and caps, the host imports;
//! - [`state`]: the per-session state bag and history, persisted in SQLite;
//! - [`model`]: the model clients (OpenAI-compatible HTTP, scripted replay);
//! - [`mcp`]: MCP servers, whose tools are offered beside the plugins';
//! - [`conversation`]: messages and the history, plain data every layer shares;
//! - [`tools`]: a tool call and its result, compiled schemas, the output cap, call ids;
//! - [`history_view`]: compaction as plain data — what is sent in place of a history's prefix, its
//!   checks, the built-in truncation;
//! - [`config`]: `config.toml`, parsed and checked with errors that name file, line and field;
//! - [`events`]: the event stream every front end renders;
//! - [`serve`]: `agent-host serve`, the HTTP API, its event streams and the web page;
//! - [`cli`]: the console, `--prompt` and `--json` front ends.

pub mod acp;
pub mod agent;
pub mod cli;
pub mod config;
pub mod conversation;
pub mod events;
pub mod history_view;
mod human_time;
pub mod mcp;
pub mod model;
pub mod oci;
pub mod plugins;
mod recent;
pub mod reload;
pub mod runtime;
pub mod sandbox;
mod sanitize;
pub mod serve;
pub mod state;
pub mod telemetry;
pub mod tools;
pub mod unpoisoned;

pub use agent::{Host, TurnEnd, TurnOutcome};
pub use config::Config;
pub use events::{Event, EventSink};
