//! The contract lines the host speaks, one file per line, like Zed's `since_v*` modules:
//! each holds that line's generated bindings (which never leave its file), links its
//! imports to the version-independent host side (`crate::runtime::host_api`), and converts
//! its types to and from the host's ([`super::types`]). A component is called through the
//! bindings of the line it was built against, read from the version of the `guest`
//! interface it exports.
//!
//! - `v0_1`: `wit/frozen/v0.1` (0.1.2; components built against 0.1.0 and 0.1.1 link
//!   against it unchanged).
//! - `v0_2`: `wit/plugin.wit`, the current line.

use wasmtime::component::{Component, ComponentNamedList, Func, InstancePre, Lift, Linker, Lower};
use wasmtime::{Engine, Store};

use super::export::{Export, Interface};
use super::types::{
    CallContext, CompactorSpec, Configured, Contribution, Exports, Manifest, PluginCompaction,
    PostToolOutcome, PreCompactOutcome, PreToolOutcome, PromptOutcome, ReviewVerdict, StopOutcome, ToolUse,
    TurnVerdict,
};
use crate::compacted_history::{CompactionBudget, Done, Viewed};
use crate::events::Widget;
use crate::runtime::CallState;
use crate::tools::{ToolCall, ToolResult};

#[macro_use]
mod every_line;
mod v0_1;
mod v0_2;

/// A contract line the host speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    V0_1,
    V0_2,
}

/// The contract whose `reuse.until-state-changes` holds in `stop` too: a plugin built against
/// an earlier one was told the call is ignored there.
pub const STOP_REUSABLE_SINCE: (u64, u64, u64) = (0, 2, 11);

/// What the `guest` interface is called, before its version.
const GUEST: &str = "agent-host:plugin/guest@";

/// The contract versions this host loads, for the error that names them.
const SUPPORTED: &str = "0.1.x and 0.2.x";

impl Line {
    /// The line `component` was built against, and the name of the `guest` interface it
    /// exports; `Err` says what it exports instead and what this host supports.
    pub fn of(component: &Component, engine: &Engine) -> Result<(Self, String), String> {
        let ty = component.component_type();
        let guest = ty.exports(engine).map(|(name, _)| name).find(|name| name.starts_with(GUEST));
        let Some(name) = guest else {
            return Err(format!(
                "the component does not export the `agent-host:plugin/guest` interface (this host \
                 supports contract versions {SUPPORTED})"
            ));
        };
        Ok((Self::of_interface(name)?, name.to_owned()))
    }

    /// The line of the exported `guest` interface `name` (`agent-host:plugin/guest@0.2.0`).
    fn of_interface(name: &str) -> Result<Self, String> {
        let version = name.strip_prefix(GUEST).unwrap_or(name);
        match version.split('.').take(2).collect::<Vec<_>>()[..] {
            ["0", "1"] => Ok(Self::V0_1),
            ["0", "2"] => Ok(Self::V0_2),
            _ => Err(format!(
                "the component is built against contract version {version} (it exports `{name}`); \
                 this host supports {SUPPORTED}"
            )),
        }
    }

    /// Whether the `guest` interface `name` is of contract `at_least` or later (the
    /// interface the plugin was built against, and so the promises it knows of).
    pub fn guest_since(name: &str, at_least: (u64, u64, u64)) -> bool {
        let version = name.strip_prefix(GUEST).unwrap_or(name);
        let mut parts = version.split('.').map(|part| part.parse::<u64>().ok());
        match (parts.next().flatten(), parts.next().flatten(), parts.next().flatten()) {
            (Some(major), Some(minor), Some(patch)) => (major, minor, patch) >= at_least,
            _ => false,
        }
    }

    /// Whether this line has `export` at all (`status` came with 0.2, the `compactor`
    /// interface with 0.2.3, the `viewer` with 0.2.4, the `judge` with 0.2.7).
    pub fn has(self, export: Export) -> bool {
        self == Self::V0_2 || (export != Export::Status && export.interface() == Interface::Guest)
    }

    /// The optional interfaces `component` exports, each with its name: found by name, so a
    /// component built before one existed links as before.
    pub fn optional_interfaces(self, component: &Component, engine: &Engine) -> Vec<(Interface, String)> {
        if self != Self::V0_2 {
            return Vec::new();
        }
        let ty = component.component_type();
        let names: Vec<&str> = ty.exports(engine).map(|(name, _)| name).collect();
        Interface::OPTIONAL
            .into_iter()
            .filter_map(|interface| {
                let name = names.iter().find(|name| name.starts_with(interface.prefix()))?;
                Some((interface, (*name).to_owned()))
            })
            .collect()
    }
}

/// Adds every line's imports to `linker`. A component built against any version of a line
/// links against its latest (the linker matches semver-compatible versions).
pub fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    v0_1::link(linker)?;
    v0_2::link(linker)
}

/// A component linked and type-checked against the bindings of its line.
pub enum GuestPre {
    V0_1(v0_1::PluginPre<CallState>),
    V0_2(v0_2::Pre),
}

impl GuestPre {
    /// Finds the exports of `pre` that the bindings of `line` call through (they are
    /// type-checked by [`Self::manifest`]).
    pub fn new(line: Line, pre: InstancePre<CallState>) -> wasmtime::Result<Self> {
        Ok(match line {
            Line::V0_1 => Self::V0_1(v0_1::PluginPre::new(pre)?),
            Line::V0_2 => Self::V0_2(v0_2::Pre::new(pre)?),
        })
    }

    pub fn line(&self) -> Line {
        match self {
            Self::V0_1(_) => Line::V0_1,
            Self::V0_2(_) => Line::V0_2,
        }
    }

    pub fn instance_pre(&self) -> &InstancePre<CallState> {
        match self {
            Self::V0_1(pre) => pre.instance_pre(),
            Self::V0_2(pre) => pre.instance_pre(),
        }
    }

    pub fn engine(&self) -> &Engine {
        match self {
            Self::V0_1(pre) => pre.engine(),
            Self::V0_2(pre) => pre.engine(),
        }
    }

    /// `manifest`, through the generated bindings (the one call that instantiates them),
    /// after type-checking every export of the `guest` interface.
    pub async fn manifest(&self, store: &mut Store<CallState>) -> wasmtime::Result<Manifest> {
        match self {
            Self::V0_1(pre) => v0_1::manifest(pre, store).await,
            Self::V0_2(pre) => v0_2::manifest(pre, store).await,
        }
    }

    pub async fn configure(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        config: &str,
    ) -> wasmtime::Result<Result<Configured, String>> {
        match self {
            Self::V0_1(_) => v0_1::configure(store, func, config).await,
            Self::V0_2(_) => v0_2::configure(store, func, config).await,
        }
    }

    pub async fn provide(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
    ) -> wasmtime::Result<Contribution> {
        match self {
            Self::V0_1(_) => v0_1::provide(store, func, ctx, config).await,
            Self::V0_2(_) => v0_2::provide(store, func, ctx, config).await,
        }
    }

    pub async fn call_tool(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        call: &ToolCall,
    ) -> wasmtime::Result<Result<String, String>> {
        match self {
            Self::V0_1(_) => v0_1::call_tool(store, func, ctx, config, call).await,
            Self::V0_2(_) => v0_2::call_tool(store, func, ctx, config, call).await,
        }
    }

    pub async fn session_start(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
    ) -> wasmtime::Result<Option<String>> {
        match self {
            Self::V0_1(_) => v0_1::session_start(store, func, ctx, config).await,
            Self::V0_2(_) => v0_2::session_start(store, func, ctx, config).await,
        }
    }

    pub async fn user_prompt_submit(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        prompt: &str,
    ) -> wasmtime::Result<PromptOutcome> {
        match self {
            Self::V0_1(_) => v0_1::user_prompt_submit(store, func, ctx, config, prompt).await,
            Self::V0_2(_) => v0_2::user_prompt_submit(store, func, ctx, config, prompt).await,
        }
    }

    pub async fn pre_tool_use(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        tool_use: &ToolUse,
    ) -> wasmtime::Result<PreToolOutcome> {
        match self {
            Self::V0_1(_) => v0_1::pre_tool_use(store, func, ctx, config, tool_use).await,
            Self::V0_2(_) => v0_2::pre_tool_use(store, func, ctx, config, tool_use).await,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn post_tool_use(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        tool_use: &ToolUse,
        result: &ToolResult,
    ) -> wasmtime::Result<PostToolOutcome> {
        match self {
            Self::V0_1(_) => v0_1::post_tool_use(store, func, ctx, config, tool_use, result).await,
            Self::V0_2(_) => v0_2::post_tool_use(store, func, ctx, config, tool_use, result).await,
        }
    }

    pub async fn stop(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        reply: &str,
    ) -> wasmtime::Result<StopOutcome> {
        match self {
            Self::V0_1(_) => v0_1::stop(store, func, ctx, config, reply).await,
            Self::V0_2(_) => v0_2::stop(store, func, ctx, config, reply).await,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn command(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        name: &str,
        args: &str,
    ) -> wasmtime::Result<Result<String, String>> {
        match self {
            Self::V0_1(_) => v0_1::command(store, func, ctx, config, name, args).await,
            Self::V0_2(_) => v0_2::command(store, func, ctx, config, name, args).await,
        }
    }

    /// `status`; a 0.1 component has none, and says nothing.
    pub async fn status(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
    ) -> wasmtime::Result<Option<String>> {
        match self {
            Self::V0_1(_) => Ok(None),
            Self::V0_2(_) => v0_2::status(store, func, ctx, config).await,
        }
    }
}

/// The `compactor` exports (contract 0.2.3). The host calls them only on a plugin whose
/// component exports the interface, so on the current line only.
impl GuestPre {
    /// `Ok` on the current line, the only one with the optional `interface`.
    fn has_interface(&self, interface: &str) -> wasmtime::Result<()> {
        match self {
            Self::V0_2(_) => Ok(()),
            Self::V0_1(_) => Err(wasmtime::format_err!("contract 0.1 has no `{interface}` interface")),
        }
    }

    pub async fn compactor_spec(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        config: &str,
    ) -> wasmtime::Result<CompactorSpec> {
        self.has_interface("compactor")?;
        v0_2::spec(store, func, config).await
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn compact(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        history: &[Viewed<'_>],
        tokens: &[u32],
        budget: &CompactionBudget,
    ) -> wasmtime::Result<Result<Option<PluginCompaction>, String>> {
        self.has_interface("compactor")?;
        v0_2::compact(store, func, ctx, config, history, tokens, budget).await
    }

    pub async fn pre_compact(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        budget: &CompactionBudget,
    ) -> wasmtime::Result<PreCompactOutcome> {
        self.has_interface("compactor")?;
        v0_2::pre_compact(store, func, ctx, config, budget).await
    }

    pub async fn post_compact(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        done: &Done,
    ) -> wasmtime::Result<()> {
        self.has_interface("compactor")?;
        v0_2::post_compact(store, func, ctx, config, done).await
    }
}

/// The `viewer` exports (contract 0.2.4), likewise on the current line only.
impl GuestPre {
    pub async fn viewer_shows(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        config: &str,
    ) -> wasmtime::Result<bool> {
        self.has_interface("viewer")?;
        call(store, func, (config,)).await
    }

    pub async fn view(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
    ) -> wasmtime::Result<Vec<Widget>> {
        self.has_interface("viewer")?;
        v0_2::view(store, func, ctx, config).await
    }
}

/// The `judge` exports (contract 0.2.7), likewise on the current line only.
impl GuestPre {
    pub async fn judge_spec(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        config: &str,
    ) -> wasmtime::Result<Exports> {
        self.has_interface("judge")?;
        v0_2::judge_spec(store, func, config).await
    }

    pub async fn turn_end(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        reply: &str,
    ) -> wasmtime::Result<TurnVerdict> {
        self.has_interface("judge")?;
        v0_2::turn_end(store, func, ctx, config, reply).await
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn review(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
        tool_use: &ToolUse,
        asked: &str,
    ) -> wasmtime::Result<ReviewVerdict> {
        self.has_interface("judge")?;
        v0_2::review(store, func, ctx, config, tool_use, asked).await
    }

    pub async fn queued(
        &self,
        store: &mut Store<CallState>,
        func: Func,
        ctx: &CallContext,
        config: &str,
    ) -> wasmtime::Result<Option<String>> {
        self.has_interface("judge")?;
        v0_2::queued(store, func, ctx, config).await
    }
}

/// Calls `func` with `params`. Checks the export's type against `P` and `R` (the line's)
/// first: cheap for one export, and what keeps the call sound.
async fn call<P, R>(store: &mut Store<CallState>, func: Func, params: P) -> wasmtime::Result<R>
where
    P: ComponentNamedList + Lower + Send + Sync,
    (R,): ComponentNamedList + Lift + Send + Sync + 'static,
{
    let typed = func.typed::<P, (R,)>(&*store)?;
    Ok(typed.call_async(&mut *store, params).await?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_is_called_through_the_line_of_its_guest_interface() {
        for (name, line) in [
            ("agent-host:plugin/guest@0.1.0", Line::V0_1),
            ("agent-host:plugin/guest@0.1.2", Line::V0_1),
            ("agent-host:plugin/guest@0.2.0", Line::V0_2),
            ("agent-host:plugin/guest@0.2.7", Line::V0_2),
        ] {
            assert_eq!(Line::of_interface(name), Ok(line), "{name}");
        }
    }

    #[test]
    fn a_promise_holds_from_the_version_that_made_it() {
        let since = |name| Line::guest_since(name, (0, 2, 11));
        assert!(since("agent-host:plugin/guest@0.2.11") && since("agent-host:plugin/guest@0.2.12"));
        assert!(since("agent-host:plugin/guest@0.3.0"));
        assert!(!since("agent-host:plugin/guest@0.2.10") && !since("agent-host:plugin/guest@0.1.12"));
        assert!(!since("agent-host:plugin/guest@0.2") && !since("agent-host:plugin/guest@x.2.11"));
    }

    #[test]
    fn another_version_is_refused_naming_it_and_the_ones_supported() {
        let error = Line::of_interface("agent-host:plugin/guest@0.3.0").unwrap_err();
        assert!(error.contains("contract version 0.3.0"), "{error}");
        assert!(error.contains("supports 0.1.x and 0.2.x"), "{error}");
        assert!(Line::of_interface("agent-host:plugin/guest@1.0.0").is_err());
        assert!(Line::of_interface("agent-host:plugin/guest@0.10.0").is_err());
    }

    #[test]
    fn status_the_compactor_the_viewer_and_the_judge_are_exports_of_the_current_line_only() {
        assert!(Line::V0_2.has(Export::Status));
        assert!(Line::V0_2.has(Export::Compact));
        assert!(Line::V0_2.has(Export::View));
        assert!(!Line::V0_1.has(Export::Status));
        assert!(!Line::V0_1.has(Export::PreCompact));
        assert!(!Line::V0_1.has(Export::ViewerShows));
        assert!(Line::V0_2.has(Export::Review));
        assert!(!Line::V0_1.has(Export::TurnEnd));
        let older = |e: &&Export| **e != Export::Status && e.interface() == Interface::Guest;
        assert!(Export::ALL.iter().filter(older).all(|e| Line::V0_1.has(*e)));
        let in_interface = |interface| Export::ALL.iter().filter(|e| e.interface() == interface).count();
        assert_eq!(in_interface(Interface::Compactor), 4);
        assert_eq!(in_interface(Interface::Viewer), 2);
        assert_eq!(in_interface(Interface::Judge), 4);
    }
}
