//! Plugins as the host sees them: the registry, loading, the contract lines and the
//! host-side types. The sandbox they run in is `crate::runtime`; the loop that calls them
//! is `crate::agent`.
//!
//! # Lifecycle
//!
//! - **Build.** A plugin given as a crate folder is built for `wasm32-wasip2` with cargo
//!   (`source`); a `.wasm` is used as it is; a stock plugin the binary carries is written
//!   once under the compile cache's folder (`builtin`).
//! - **Load, once per plugin version.** The component's bytes are read and hashed once; the
//!   hash decides whether the previous set's plugin can be reused as it is, and keys the
//!   compile cache. The component's exported `guest` interface names the contract line it
//!   was built against (0.1.x or 0.2.x; anything else is a load error naming both), and it
//!   is linked and type-checked against that line's bindings (`contract`). The plugin is
//!   asked for its `manifest` (the one call through the generated bindings; later calls
//!   look up only their own export, by an index kept from load), and its
//!   `[plugin.config]` goes through `configure`, which returns the configuration every
//!   later call gets and what it requires of the host, and may declare which tool calls
//!   its hooks need (`hook_filter`). Only a plugin that passed all of that becomes a
//!   [`LoadedPlugin`], built in one go; anything else is a [`LoadError`] naming the plugin,
//!   and on hot reload the old version stays live.
//! - **Check the set.** [`PluginSet`] loads every enabled plugin in config order and accepts
//!   the set only whole: unique names, unique tool names, and every requirement granted
//!   under the plugin's `[plugin.grants]`, naming the grant to add when one is missing; so
//!   is every export that acts in the operator's place ([`powers`]: `review`, `queued`).
//! - **Call.** Each export is called on a fresh store of the sandbox, through the bindings
//!   of the plugin's line, its arguments and results converted to and from the host types
//!   ([`types`]). A trap, a timeout, a memory-limit hit, a panic (its message is read from
//!   the guest's stderr) or a malformed return becomes a [`PluginError`] for that call
//!   alone, naming the plugin and its version; the overlay of that call is discarded, so a
//!   failed call never leaves half its writes in the bag. A tool call or `provide` that
//!   moved the state of a plugin that shows a view asks the view in its own instance
//!   afterwards ([`FreshView`]): the view the session would ask next, without a second
//!   instantiation. A tool call that moved its plugin's state asks there, too, the plugin's
//!   next contribution when its last one was reusable (`ahead.rs`), for the next model call.
//! - **Fewer calls.** A `pre-tool-use` or `post-tool-use` hook is called only for the tool
//!   calls its filter lets through; [`CallCounts`] records the calls each export really got.
//! - **Reuse.** `provide` runs before every model call. A plugin whose contribution depends
//!   only on its config and the state it reads says so (`reuse.until-state-changes`); the
//!   host keeps that contribution per session with the values read ([`ProvideMemo`]) and
//!   skips the call while they hold; each plugin load also keeps the last few for any session
//!   holding the same values (a new session starts from them). A call with effects (writes,
//!   events) is never reused.
//! - **Status.** Front ends ask the set for the plugins' status texts
//!   ([`PluginSet::status`]) when they draw a prompt; those calls change nothing.
//! - **Commit.** A call that succeeds hands back its state writes and events; the caller
//!   applies them to the session, whose step commit makes them durable.
//! - **Retire.** A `LoadedPlugin` is reference-counted: a hot reload swaps in a new
//!   [`PluginSet`] while calls in flight keep the old `Arc` and finish on the old version.

mod ahead;
pub mod builtin;
mod call_counts;
mod calls;
mod contract;
mod declared_tools;
mod description;
mod error;
mod export;
mod hook_filter;
mod judging;
mod loaded;
mod origin;
mod outputs;
pub mod powers;
mod registry;
mod requirements;
mod reuse;
mod schema;
mod source;
pub mod types;
mod viewing;

pub use crate::runtime::PluginFailure;
pub use crate::runtime::host_api::{MeterReading, ResultPositions};
pub use call_counts::CallCounts;
pub use calls::PluginOutput;
pub use declared_tools::DeclaredTool;
pub use description::{Description, describe};
pub use error::{LoadError, PluginError};
pub use export::Export;
pub use loaded::{ComponentFile, LoadedPlugin, PluginIdentity, PluginSpec};
pub use registry::PluginSet;
pub use reuse::{ProvideMemo, StopMemo};
pub use source::{
    BuildSandbox, Progress, build_crate, build_workspace, resolve_component, rust_sdk, source_digest,
};
pub use types::{
    AgentsAccess, CallContext, CommandSpec, CompactorSpec, Configured, Contribution, Decision, Exports,
    InjectedMessage, InjectedRole, JudgedStop, Manifest, ModelAccess, PluginCompaction, PluginEvent,
    PostToolOutcome, PreCompactOutcome, PreToolOutcome, PromptOutcome, Requirement, ReviewVerdict,
    StopOutcome, ToolSpec, ToolUse, TurnVerdict,
};
pub use viewing::FreshView;

/// The sandbox's engine with every contract line's imports linked.
pub fn engine() -> anyhow::Result<crate::runtime::SandboxEngine> {
    crate::runtime::SandboxEngine::new(contract::link)
}
