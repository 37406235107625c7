//! The plugin runtime: how a component is loaded, called and contained.
//!
//! # Lifecycle
//!
//! - **One engine.** [`Engine`](engine::SandboxEngine) owns the single `wasmtime::Engine`:
//!   cranelift, the component model, epoch interruption (a ticker thread advances the epoch
//!   every [`engine::TICK`]) and, where the machine allows it, the pooling instance
//!   allocator. Nothing else in the host touches `wasmtime::Config`.
//! - **Load, once per plugin version.** The component's bytes are hashed; a precompiled
//!   artifact keyed by that hash and the engine's compatibility hash is loaded from the disk
//!   cache, or the component is compiled and the artifact written ([`cache`]). The component
//!   is linked against WASI (with no preopens, no environment, no network unless granted)
//!   and our `state`, `events` and `log` imports into an `InstancePre`, the plugin is asked
//!   for its `manifest` (the one call that type-checks every export against the contract;
//!   later calls look up only their own export, by an index kept from load), and its
//!   `[plugin.config]` goes through `configure`, where it may also declare which tool calls
//!   its hooks need ([`hook_filter`]). Only a plugin
//!   that passed all of that becomes a [`LoadedPlugin`]; anything else is a [`LoadError`]
//!   naming the plugin, and on hot reload the old version stays live.
//! - **Call, on a fresh store.** Every call gets a new `Store` whose data is a
//!   [`CallState`](call::CallState): the session's state bag seen through a write overlay,
//!   the events the call emits, its WASI context and its limits. The instance comes from the
//!   pooling allocator (about 15 µs for instantiate + a near-empty call + teardown, see
//!   BENCHMARKS.md). The store is dropped when the call returns and its pool slot is reset to
//!   the component's initial image (the touched pages restored in place), so no plugin memory
//!   outlives a call and sessions are isolated by construction.
//! - **Limits.** Each call runs under an epoch deadline (`timeout_ms`) and a memory cap
//!   (`memory_mb`, enforced by a resource limiter that records the hit, so the error says
//!   "memory limit" rather than a bare `unreachable`). Text a call returns is capped at
//!   `max_output_kb`. The whole call — instantiate, export, and every host import it waits
//!   in (a process, a sleep, a read) — also runs under a host-side timer of `timeout_ms`:
//!   the epoch stops guest code only. What a call hands the host (state, events, log text)
//!   is counted against the host-side caps ([`caps`]); an import over one traps the call.
//! - **Failure.** A trap, a timeout, a memory-limit hit, a panic (its message is read from
//!   the guest's stderr) or a malformed return becomes a [`PluginError`] for that call alone,
//!   naming the plugin and its version. The overlay of that call is discarded, so a failed
//!   call never leaves half its writes in the bag; the host and the session carry on.
//! - **Fewer calls.** A `pre-tool-use` or `post-tool-use` hook is called only for the tool
//!   calls its filter lets through; [`CallCounts`] records the calls each export really got.
//! - **Reuse.** `provide` runs before every model call. A plugin whose contribution depends
//!   only on its config and the state it reads says so (`reuse.until-state-changes`); the
//!   host keeps that contribution per session with the values read ([`ProvideMemo`]) and
//!   skips the call while they hold; each plugin load also keeps the last few for any session
//!   holding the same values (a new session starts from them). A call with effects (writes,
//!   events) is never reused.
//! - **Commit.** A call that succeeds hands back its state writes and events; the caller
//!   applies them to the session, whose step commit makes them durable.
//! - **Retire.** A `LoadedPlugin` is reference-counted: a hot reload swaps in a new
//!   [`PluginSet`](crate::agent::PluginSet) while calls in flight keep the old `Arc` and
//!   finish on the old version.

mod bindings;
mod cache;
mod call;
mod call_counts;
mod caps;
mod engine;
mod error;
mod export;
mod hook_filter;
mod host_api;
mod limiter;
mod outputs;
mod plugin;
mod reuse;
mod source;

pub use bindings::types::{
    Capabilities, Contribution, Decision, InjectedMessage, PostToolOutcome, PreToolOutcome, PromptOutcome,
    Role, StopOutcome, ToolCall, ToolResult, ToolSpec, ToolUse,
};
pub use cache::cache_key_path;
pub use call::{CallOutput, StateWrite};
pub use call_counts::CallCounts;
pub use engine::SandboxEngine;
pub use error::{LoadError, PluginError};
pub use export::Export;
pub use plugin::{CallContext, LoadedPlugin, PluginIdentity, PluginSpec, plugin_spec};
pub use reuse::ProvideMemo;
pub use source::{Progress, build_crate, build_workspace, resolve_component};
