//! The sandbox plugins run in: one engine, a fresh store per call, its limits and caps, the
//! compile cache, and the host side of the plugin's imports. It knows no contract version
//! and no plugin: `crate::plugins` loads components, speaks each contract line and keeps
//! the registry, and calls in through this module.
//!
//! # What the sandbox guarantees
//!
//! - **One engine.** [`SandboxEngine`] owns the single `wasmtime::Engine`: cranelift, the
//!   component model, epoch interruption (a ticker thread advances the epoch every
//!   [`engine::TICK`]) and, where the machine allows it, the pooling instance allocator.
//!   Nothing else in the host touches `wasmtime::Config`. Its linker holds WASI (with no
//!   preopens, no environment, no network unless granted) and whatever the contract lines
//!   add on top.
//! - **Compile once.** A precompiled artifact keyed by the component's hash and the engine's
//!   compatibility hash is loaded from the disk cache, or the component is compiled and the
//!   artifact written ([`cache`]). What is compiled is the component with its exports lifted
//!   without post-return functions ([`reshape`]): an instance never outlives its call.
//! - **Call, on a fresh store.** Every call gets a new `Store` whose data is a
//!   [`CallState`]: the session's state bag seen through a write overlay, the events the
//!   call emits, its WASI context and its limits. The instance comes from the pooling
//!   allocator (its cost is in BENCHMARKS.md). The store is dropped when the call returns
//!   and its pool slot is reset to the component's initial image (the touched pages
//!   restored in place), so no plugin memory outlives a call and sessions are isolated by
//!   construction. The one second call a store may carry is a plugin's read-only `view`
//!   right after its own call in the same session moved its state
//!   ([`CallState::arm_again`] gives it a deadline and caps of its own).
//! - **Limits.** Each call runs under an epoch deadline (`timeout_ms`) and a memory cap
//!   (`memory_mb`, enforced by a resource limiter that records the hit, so the error can say
//!   "memory limit" rather than a bare `unreachable`). What a call hands the host (state,
//!   events, log text) is counted against the host-side caps ([`caps`]); an import over one
//!   traps the call.
//! - **Host imports** ([`host_api`]): state through the overlay (another plugin's namespace
//!   only when granted), events, log lines, processes in the OS sandbox (`crate::sandbox`)
//!   for plugins granted `process = true`, the model for plugins granted `model = true`
//!   (through a [`host_api::ModelService`] it is handed, within the grant's token budgets and
//!   the call's deadline), the reuse, hook-filter and tool declarations. Each is written once,
//!   in host types; the contract lines convert to them.

pub mod cache;
mod call;
pub mod caps;
mod deadline;
mod declarations;
mod engine;
mod failure;
pub mod host_api;
mod limiter;
pub mod reshape;

pub use call::{CallState, CallingPlugin, DirMount, EmittedEvent, ProcessGrant, StateRead};
pub use deadline::Deadline;
pub use declarations::{Declarations, HookDeclaration, ToolFilter, ToolHook, ToolSpec};
pub use engine::{SandboxEngine, TICK};
pub use failure::PluginFailure;
pub use limiter::MemoryCap;
