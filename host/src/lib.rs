//! agent-host's core: an LLM agent loop whose behaviour lives in sandboxed WebAssembly
//! plugins. The front ends are crates over it (`agent-host-serve`, `agent-host-acp`, and
//! `agent-host-cli` with the binary); this crate links none of their dependencies.
//!
//! The modules, top layer first (docs/architecture.md; `tests/e2e/layering.rs` checks this
//! list against the folders):
//! - [`reload`]: hot reload — a debounced watcher, the files a deployment runs, what changed;
//! - [`agent`]: the loop — `Host`, live sessions, one user turn, tool calls through hooks;
//! - [`mcp`]: MCP servers, whose tools are offered beside the plugins';
//! - [`plugins`]: plugins as the host sees them — building, loading, the registry, every export;
//! - [`model`]: the model clients (OpenAI-compatible, Anthropic, scripted replay), the estimate;
//! - [`oci`]: plugins as signed OCI artifacts, pinned in `plugins.lock`;
//! - [`runtime`]: the WebAssembly sandbox — wasmtime engine, limits and caps, the host imports;
//! - [`state`]: sessions in a store (SQLite or PostgreSQL): the state bag, history, leases;
//! - [`sandbox`]: the OS sandbox every process a plugin starts runs in;
//! - [`config`]: `config.toml`, parsed and checked with errors that name file, line and field;
//! - [`events`]: the event stream every front end renders, and what plugins show (views);
//! - [`compacted_history`]: compaction as plain data — what is sent in place of a history's prefix,
//!   its checks, the built-in truncation;
//! - [`conversation`]: messages and the history, plain data every layer shares;
//! - [`sanitize`]: control and format characters escaped in text from models, tools, plugins;
//! - [`recent`]: a small least-recently-used map;
//! - [`human_time`]: "3 min ago";
//! - [`telemetry`]: the spans a trace holds;
//! - [`tls`]: the TLS the host's outbound HTTPS clients speak;
//! - [`tools`]: a tool call and its result, compiled schemas, the output cap, call ids;
//! - [`unpoisoned`]: locks taken through a poisoning.

pub mod agent;
pub mod compacted_history;
pub mod config;
pub mod conversation;
pub mod events;
pub mod human_time;
pub mod mcp;
pub mod model;
pub mod oci;
pub mod plugins;
pub mod recent;
pub mod reload;
pub mod runtime;
pub mod sandbox;
pub mod sanitize;
pub mod state;
pub mod telemetry;
pub mod tls;
pub mod tools;
pub mod unpoisoned;

pub use agent::{Host, TurnEnd, TurnOutcome};
pub use config::Config;
pub use events::{Event, EventSink};
