//! Calling a loaded plugin: one method per export, each on a fresh store from the pool,
//! with the call's limits armed, through the bindings of the plugin's contract line; a
//! failure classified by the runtime (`PluginFailure::classify`) and named after the plugin
//! once, in [`Linked::bounded`].

use std::sync::Arc;

use wasmtime::Store;
use wasmtime::component::{Func, Instance};

use super::error::PluginError;
use super::export::Export;
use super::loaded::{Linked, LoadedPlugin, PluginBounds};
use super::outputs::{Returned, StatusText};
use super::reuse::{ProvideMemo, StopMemo};
use super::schema::schema_problem;
use super::types::{
    CallContext, CompactorSpec, Configured, Contribution, Manifest, PluginCompaction, PostToolOutcome,
    PreCompactOutcome, PreToolOutcome, PromptOutcome, StopOutcome, ToolUse,
};
use super::viewing::{FreshView, Warm};
use crate::compacted_history::{CompactionBudget, Done, Viewed};
use crate::events::FileEdit;
use crate::runtime::PluginFailure;
use crate::runtime::host_api::{AgentsGrant, ModelGrant};
use crate::runtime::{CallState, Deadline, Declarations, EmittedEvent, StateRead};
use crate::state::StateBag;
use crate::telemetry;
use crate::tools::CompiledSchema;
use crate::tools::{ToolCall, ToolResult};
use tracing::Instrument as _;

/// What a successful call returns: its value and the events it emitted, in order. Its state
/// writes have already been applied to the session's bag.
#[derive(Debug)]
pub struct PluginOutput<R> {
    pub value: R,
    pub events: Vec<EmittedEvent>,
    /// Files the call reports it changed (contract 0.2.5): only a tool call's are shown.
    pub edits: Vec<FileEdit>,
    /// The plugin's view as the call left its state, asked in the call's own instance: set
    /// when the call moved the plugin's state and the plugin shows a view (tool calls and
    /// `provide`), so the session need not instantiate the plugin again to ask it.
    pub view: Option<FreshView>,
}

impl LoadedPlugin {
    /// `provide`, or the contribution `memo` kept from an earlier call that declared itself
    /// reusable, when every state value that call read is unchanged in `bag`. Shared, not
    /// copied: a reused contribution is the very one kept.
    pub async fn provide(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        memo: &ProvideMemo,
    ) -> Result<PluginOutput<Arc<Contribution>>, PluginError> {
        if let Some(value) = memo.reuse(self.load_id, &self.shared, bag) {
            return Ok(PluginOutput { value, events: Vec::new(), edits: Vec::new(), view: None });
        }
        let (linked, bounds) = (&self.linked, &self.bounds);
        let (settled, warm) = linked
            .bounded(bounds, Export::Provide, async |deadline| {
                let (mut store, func, instance) =
                    linked.instantiate(bounds, bag, Export::Provide, Some(ctx), deadline).await?;
                store.data_mut().reads = Some(Vec::new());
                let result = linked.guest.provide(&mut store, func, ctx, &self.config).await;
                let mut settled = linked.settle(bounds, &mut store, result, bag)?;
                settled.output = checked(bounds, settled.output)?;
                self.check_schemas(&settled.output.value)?;
                let warm = settled.wrote.then_some(Warm { store, instance });
                Ok((settled, warm))
            })
            .await?;
        let PluginOutput { value, events, edits, .. } = settled.output;
        let value = Arc::new(value);
        memo.keep(self.load_id, &self.shared, settled.reads.map(|reads| (reads, value.clone())));
        Ok(self.view_after(PluginOutput { value, events, edits, view: None }, warm, ctx, bag).await)
    }

    /// A tool call; when it moved the plugin's state, the plugin's next contribution is
    /// asked ahead into `memo` (`ahead.rs`) and its view asked, in the call's instance.
    pub async fn call_tool(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        call: &ToolCall,
        memo: &ProvideMemo,
    ) -> Result<PluginOutput<Result<String, String>>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.call_tool(store, func, ctx, &self.config, call).await
        };
        let (output, warm) =
            self.linked.invoke_warm(&self.bounds, bag, Export::CallTool, Some(ctx), call).await?;
        let warm = match warm {
            Some(warm) => self.provide_ahead(warm, ctx, bag, memo).await,
            None => None,
        };
        Ok(self.view_after(output, warm, ctx, bag).await)
    }

    pub async fn session_start(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
    ) -> Result<PluginOutput<Option<String>>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.session_start(store, func, ctx, &self.config).await
        };
        self.linked.invoke(&self.bounds, bag, Export::SessionStart, Some(ctx), call).await
    }

    pub async fn user_prompt_submit(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        prompt: &str,
    ) -> Result<PluginOutput<PromptOutcome>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.user_prompt_submit(store, func, ctx, &self.config, prompt).await
        };
        self.linked.invoke(&self.bounds, bag, Export::UserPromptSubmit, Some(ctx), call).await
    }

    pub async fn pre_tool_use(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        tool_use: &ToolUse,
    ) -> Result<PluginOutput<PreToolOutcome>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.pre_tool_use(store, func, ctx, &self.config, tool_use).await
        };
        self.linked.invoke(&self.bounds, bag, Export::PreToolUse, Some(ctx), call).await
    }

    pub async fn post_tool_use(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        tool_use: &ToolUse,
        result: &ToolResult,
    ) -> Result<PluginOutput<PostToolOutcome>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.post_tool_use(store, func, ctx, &self.config, tool_use, result).await
        };
        self.linked.invoke(&self.bounds, bag, Export::PostToolUse, Some(ctx), call).await
    }

    /// `stop`, or the outcome `memo` kept from an earlier call that declared itself reusable
    /// (contract 0.2.11), this session's or any session's, when every state value that call
    /// read holds in `bag`.
    pub async fn stop(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        reply: &str,
        memo: &StopMemo,
    ) -> Result<PluginOutput<StopOutcome>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.stop(store, func, ctx, &self.config, reply).await
        };
        // Built before 0.2.11: its outcome is never kept, so its reads need no recording.
        let Some(shared) = &self.shared_stops else {
            return self.linked.invoke(&self.bounds, bag, Export::Stop, Some(ctx), call).await;
        };
        if let Some(outcome) = memo.reuse(self.load_id, shared, bag) {
            let value = outcome.as_ref().clone();
            return Ok(PluginOutput { value, events: Vec::new(), edits: Vec::new(), view: None });
        }
        let (output, reads) =
            self.linked.invoke_reusable(&self.bounds, bag, Export::Stop, Some(ctx), call).await?;
        memo.keep(self.load_id, shared, reads.map(|reads| (reads, Arc::new(output.value.clone()))));
        Ok(output)
    }

    pub async fn command(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        name: &str,
        args: &str,
    ) -> Result<PluginOutput<Result<String, String>>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.command(store, func, ctx, &self.config, name, args).await
        };
        self.linked.invoke(&self.bounds, bag, Export::Command, Some(ctx), call).await
    }

    /// `compact` (contract 0.2.3): what the plugin puts in place of a prefix of `history`,
    /// the messages sent now with their estimated `tokens`, within `budget`.
    pub async fn compact(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        history: &[Viewed<'_>],
        tokens: &[u32],
        budget: &CompactionBudget,
    ) -> Result<PluginOutput<Result<Option<PluginCompaction>, String>>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.compact(store, func, ctx, &self.config, history, tokens, budget).await
        };
        self.linked.invoke(&self.bounds, bag, Export::Compact, Some(ctx), call).await
    }

    pub async fn pre_compact(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        budget: &CompactionBudget,
    ) -> Result<PluginOutput<PreCompactOutcome>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.pre_compact(store, func, ctx, &self.config, budget).await
        };
        self.linked.invoke(&self.bounds, bag, Export::PreCompact, Some(ctx), call).await
    }

    pub async fn post_compact(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        done: &Done,
    ) -> Result<PluginOutput<()>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.post_compact(store, func, ctx, &self.config, done).await
        };
        self.linked.invoke(&self.bounds, bag, Export::PostCompact, Some(ctx), call).await
    }

    /// `status`: the plugin's short status text, or `None`. Its state writes and events are
    /// discarded (see `StatusText`): front ends call it whenever they draw, and drawing
    /// changes nothing.
    pub async fn status(&self, ctx: &CallContext, bag: &StateBag) -> Result<Option<String>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.status(store, func, ctx, &self.config).await.map(StatusText)
        };
        Ok(self.linked.invoke(&self.bounds, bag, Export::Status, None, call).await?.value.0)
    }

    /// Checks that every tool schema `contribution` offers is a JSON object, and compiles
    /// it. A plugin offers the same few schemas on every `provide`, so each text is checked
    /// and compiled once and then only recognised.
    pub(super) fn check_schemas(&self, contribution: &Contribution) -> Result<(), PluginFailure> {
        for tool in contribution.tools.iter().filter(|tool| !self.schemas.has(&tool.parameters)) {
            if let Some(detail) = schema_problem(tool) {
                return Err(PluginFailure::Malformed { detail });
            }
            // One that does not compile is reported where the tool is offered to the model.
            let _ = self.schemas.get(&tool.parameters);
        }
        Ok(())
    }

    /// The compiled schema of a tool this plugin offers, by its text; `Err` says why the
    /// schema is unusable.
    pub fn schema(&self, text: &str) -> Result<Arc<CompiledSchema>, String> {
        self.schemas.get(text)
    }
}

impl Linked {
    /// `manifest`, through the generated bindings, which type-check every export against
    /// the contract line: once per load, so a mismatched plugin fails here with a clear
    /// message and the calls after it look up only the export they need.
    pub(super) async fn manifest(
        &self,
        bounds: &PluginBounds,
        bag: &StateBag,
    ) -> Result<PluginOutput<Manifest>, PluginError> {
        self.bounded(bounds, Export::Manifest, async |deadline| {
            let mut store = self.fresh_store(bounds, bag, Export::Manifest, deadline);
            let result = self.guest.manifest(&mut store).await;
            self.settle(bounds, &mut store, result, bag).map(|settled| settled.output)
        })
        .await
    }

    /// `configure`, and the hook filters and tools it declared.
    pub(super) async fn configure(
        &self,
        bounds: &PluginBounds,
        bag: &StateBag,
        config: &str,
    ) -> Result<(PluginOutput<Result<Configured, String>>, Declarations), PluginError> {
        self.bounded(bounds, Export::Configure, async |deadline| {
            let (mut store, func, _) =
                self.instantiate(bounds, bag, Export::Configure, None, deadline).await?;
            store.data_mut().declarations = Some(Declarations::default());
            let result = self.guest.configure(&mut store, func, config).await;
            let declared = store.data_mut().declarations.take().unwrap_or_default();
            self.settle(bounds, &mut store, result, bag).map(|settled| (settled.output, declared))
        })
        .await
    }

    /// The `compactor` interface's `spec` under the configuration `configure` returned.
    pub(super) async fn compactor_spec(
        &self,
        bounds: &PluginBounds,
        bag: &StateBag,
        config: &str,
    ) -> Result<PluginOutput<CompactorSpec>, PluginError> {
        let call =
            async |store: &mut Store<CallState>, func| self.guest.compactor_spec(store, func, config).await;
        self.invoke(bounds, bag, Export::CompactorSpec, None, call).await
    }

    /// One call of `export` with nothing around it: instantiated on a fresh store, `call`
    /// made under the call's deadline, its failure classified or its effects kept, and what
    /// it returned checked.
    pub(super) async fn invoke<R: Returned>(
        &self,
        bounds: &PluginBounds,
        bag: &StateBag,
        export: Export,
        ctx: Option<&CallContext>,
        call: impl AsyncFnOnce(&mut Store<CallState>, Func) -> wasmtime::Result<R>,
    ) -> Result<PluginOutput<R>, PluginError> {
        Ok(self.invoke_warm(bounds, bag, export, ctx, call).await?.0)
    }

    /// [`Self::invoke`] with what the call read recorded: also those reads when the call
    /// declared its result reusable and had no effects (see [`CallState::take_reuse`]).
    pub(super) async fn invoke_reusable<R: Returned>(
        &self,
        bounds: &PluginBounds,
        bag: &StateBag,
        export: Export,
        ctx: Option<&CallContext>,
        call: impl AsyncFnOnce(&mut Store<CallState>, Func) -> wasmtime::Result<R>,
    ) -> Result<(PluginOutput<R>, Option<Vec<StateRead>>), PluginError> {
        self.bounded(bounds, export, async |deadline| {
            let (mut store, func, _) = self.instantiate(bounds, bag, export, ctx, deadline).await?;
            store.data_mut().reads = Some(Vec::new());
            let result = call(&mut store, func).await;
            let settled = self.settle(bounds, &mut store, result, bag)?;
            Ok((checked(bounds, settled.output)?, settled.reads))
        })
        .await
    }

    /// [`Self::invoke`], also handing back the instance when the call committed writes.
    pub(super) async fn invoke_warm<R: Returned>(
        &self,
        bounds: &PluginBounds,
        bag: &StateBag,
        export: Export,
        ctx: Option<&CallContext>,
        call: impl AsyncFnOnce(&mut Store<CallState>, Func) -> wasmtime::Result<R>,
    ) -> Result<(PluginOutput<R>, Option<Warm>), PluginError> {
        self.bounded(bounds, export, async |deadline| {
            let (mut store, func, instance) = self.instantiate(bounds, bag, export, ctx, deadline).await?;
            let result = call(&mut store, func).await;
            let settled = self.settle(bounds, &mut store, result, bag)?;
            let warm = settled.wrote.then_some(Warm { store, instance });
            Ok((checked(bounds, settled.output)?, warm))
        })
        .await
    }

    /// Runs one whole call under the plugin's deadline: instantiating it, the export, and
    /// every host import it waits in. The epoch deadline stops guest code only; this stops a
    /// call waiting in the host (a process, a sleep, a read). At the deadline the call's
    /// future is dropped, and its store with it: none of its writes or events are kept.
    /// Whatever failed, the error names the plugin here.
    pub(super) async fn bounded<T>(
        &self,
        bounds: &PluginBounds,
        export: Export,
        call: impl AsyncFnOnce(Deadline) -> Result<T, PluginFailure>,
    ) -> Result<T, PluginError> {
        let span = telemetry::plugin_call(&bounds.caller.name, export.wit_name());
        let deadline = Deadline::starting_now(bounds.limits.timeout_ms);
        let called = tokio::time::timeout_at(deadline.at(), call(deadline))
            .instrument(span.clone())
            .await
            .unwrap_or_else(|_| Err(PluginFailure::timed_out(deadline.ms())));
        telemetry::plugin_returned(&span, called.as_ref().map_or_else(PluginFailure::kind, |_| "ok"));
        called.map_err(|kind| PluginError::new(bounds.caller.label.as_str(), kind))
    }

    /// A fresh store and instance for one call of `export`, with the call's limits armed,
    /// and the export to call. `ctx` brings the model a `model = true` grant may ask.
    async fn instantiate(
        &self,
        bounds: &PluginBounds,
        bag: &StateBag,
        export: Export,
        ctx: Option<&CallContext>,
        deadline: Deadline,
    ) -> Result<(Store<CallState>, Func, Instance), PluginFailure> {
        let mut store = self.fresh_store(bounds, bag, export, deadline);
        store.data_mut().model = bounds.model.map(|budget| ModelGrant {
            budget,
            service: ctx.and_then(|ctx| ctx.model.as_ref()).map(|model| model.0.clone()),
        });
        store.data_mut().agents = bounds.agents.then(|| AgentsGrant {
            service: ctx.and_then(|ctx| ctx.agents.as_ref()).map(|agents| agents.0.clone()),
        });
        store.data_mut().meter = ctx.map(|ctx| ctx.meter).unwrap_or_default();
        store.data_mut().results = ctx.and_then(|ctx| ctx.results.clone());
        let instance = self
            .guest
            .instance_pre()
            .instantiate_async(&mut store)
            .await
            .map_err(|error| PluginFailure::Instantiate { detail: format!("{error:#}") })?;
        let func = self.func(&mut store, &instance, export)?;
        Ok((store, func, instance))
    }

    /// `export` of `instance`.
    pub(super) fn func(
        &self,
        store: &mut Store<CallState>,
        instance: &Instance,
        export: Export,
    ) -> Result<Func, PluginFailure> {
        self.exports.get(export).and_then(|index| instance.get_func(&mut *store, index)).ok_or_else(|| {
            PluginFailure::Malformed {
                detail: format!("the component has no `{}` export", export.wit_name()),
            }
        })
    }

    /// A fresh store for one call of `export`: its state and limits (its WASI context is
    /// built if the call uses WASI at all, see [`CallState`]).
    fn fresh_store(
        &self,
        bounds: &PluginBounds,
        bag: &StateBag,
        export: Export,
        deadline: Deadline,
    ) -> Store<CallState> {
        self.calls.count(export);
        self.calls.count_instance();
        CallState::new(
            bounds.caller.clone(),
            bag.clone(),
            bounds.read_grants.clone(),
            bounds.process.clone(),
            &bounds.limits,
            bounds.dirs.clone(),
            deadline,
        )
        .into_store(self.guest.engine())
    }

    /// Ends a call: classifies a failure, or applies the state writes (only if the value
    /// says the call succeeded, see [`Returned::commits`]) and hands back the events, what the
    /// call read when it declared its result reusable (see [`CallState::take_reuse`]), and
    /// whether it committed writes. The store stays the caller's.
    pub(super) fn settle<R: Returned>(
        &self,
        bounds: &PluginBounds,
        store: &mut Store<CallState>,
        result: wasmtime::Result<R>,
        bag: &StateBag,
    ) -> Result<Settled<R>, PluginFailure> {
        let value = PluginFailure::classify(store.data(), result)?;
        let state = store.data_mut();
        let reads = state.take_reuse();
        let writes = std::mem::take(&mut state.writes);
        let wrote = value.commits() && !writes.is_empty();
        if value.commits() {
            bag.apply(&bounds.caller.name, writes);
        }
        let (events, edits) = (std::mem::take(&mut state.events), state.edits.take());
        let output = PluginOutput { value, events, edits, view: None };
        Ok(Settled { output, reads, wrote })
    }
}

/// A call ended: see [`Linked::settle`].
pub(super) struct Settled<R> {
    pub(super) output: PluginOutput<R>,
    pub(super) reads: Option<Vec<StateRead>>,
    wrote: bool,
}

/// Caps and checks what a call returned; see [`Returned`].
pub(super) fn checked<R: Returned>(
    bounds: &PluginBounds,
    mut output: PluginOutput<R>,
) -> Result<PluginOutput<R>, PluginFailure> {
    let max_bytes = bounds.limits.max_output_bytes();
    output.value.check(max_bytes).map_err(|detail| PluginFailure::Malformed { detail })?;
    Ok(output)
}
