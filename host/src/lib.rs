//! agent-host: an LLM agent loop whose behaviour lives in sandboxed WebAssembly plugins.
//!
//! The folders follow the architecture (see DESIGN.md):
//! - [`agent`]: the loop — one user turn, model round trips, tool calls through hooks;
//! - [`plugins`]: plugins as the host sees them — registry, loading, contract versions, types;
//! - [`runtime`]: the sandbox — wasmtime engine, limits and caps, the host imports;
//! - [`state`]: the per-session state bag and history, persisted in SQLite;
//! - [`model`]: the model clients (OpenAI-compatible HTTP, scripted replay);
//! - [`config`]: `config.toml`, parsed and checked with errors that name file, line and field;
//! - [`events`]: the event stream every front end renders;
//! - [`cli`]: the console, `--prompt` and `--json` front ends.

pub mod agent;
pub mod cli;
pub mod config;
pub mod events;
pub mod model;
pub mod plugins;
mod recent;
pub mod reload;
pub mod runtime;
pub mod sandbox;
mod sanitize;
pub mod state;

pub use agent::{Host, TurnEnd, TurnOutcome};
pub use config::Config;
pub use events::{Event, EventSink};

/// Every binary built on the host (the CLI, the benchmarks, the tests) allocates through
/// mimalloc. A model round trip makes hundreds of small, short-lived allocations (request
/// and reply text, events, plugin call buffers) on whichever worker thread runs the session;
/// glibc's allocator spent about a tenth of the CPU at concurrency 50 on them (measured with
/// `perf`), consolidating and contending across threads. mimalloc 2 rather than 3: as fast
/// in the load bench, and its resident memory stays flat over 100,000 sessions where 3's
/// crept up (BENCHMARKS.md, item 21).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
