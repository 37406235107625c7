//! Calling a loaded plugin: one method per export, each on a fresh store from the pool,
//! with the call's limits armed; a failure classified into a [`PluginError`] naming the plugin.

use std::sync::Arc;

use wasmtime::component::{ComponentNamedList, Func, Lift, Lower};
use wasmtime::{Store, Trap};

use super::{CallContext, LoadedPlugin};
use crate::runtime::bindings::types;
use crate::runtime::call::{CallOutput, CallState};
use crate::runtime::caps::CallCaps;
use crate::runtime::engine::SandboxEngine;
use crate::runtime::error::PluginError;
use crate::runtime::export::Export;
use crate::runtime::hook_filter::HookFilters;
use crate::runtime::limiter::MemoryCap;
use crate::runtime::outputs::{Checked, schema_problem};
use crate::runtime::reuse::{ProvideMemo, StateRead};
use crate::state::StateBag;

impl LoadedPlugin {
    pub(super) async fn manifest(
        &self,
        bag: &StateBag,
    ) -> Result<CallOutput<types::PluginManifest>, PluginError> {
        // Through the generated bindings, which type-check every export against the
        // contract: once per load, so a mismatched plugin fails here with a clear message
        // and the calls after it look up only the export they need.
        self.bounded(async {
            let mut store = self.fresh_store(bag, Export::Manifest)?;
            let instance = self
                .pre
                .instantiate_async(&mut store)
                .await
                .map_err(|error| self.instantiate_error(error))?;
            let result = instance.agent_host_plugin_guest().call_manifest(&mut store).await;
            self.finish(store, result, bag)
        })
        .await
    }

    /// `configure`, and the tool hooks' filters it declared.
    pub(super) async fn configure(
        &self,
        bag: &StateBag,
        config: &str,
    ) -> Result<(CallOutput<Result<String, String>>, HookFilters), PluginError> {
        self.bounded(async {
            let (mut store, func) = self.instantiate(bag, Export::Configure).await?;
            store.data_mut().hook_filters = Some(HookFilters::default());
            let result = call_export::<(&str,), Result<String, String>>(&mut store, func, (config,)).await;
            let filters = store.data_mut().hook_filters.take().unwrap_or_default();
            self.finish(store, result, bag).map(|output| (output, filters))
        })
        .await
    }

    /// `provide`, or the contribution `memo` kept from an earlier call that declared itself
    /// reusable, when every state value that call read is unchanged in `bag`. Shared, not
    /// copied: a reused contribution is the very one kept.
    pub async fn provide(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        memo: &ProvideMemo,
    ) -> Result<CallOutput<Arc<types::Contribution>>, PluginError> {
        if let Some(value) = memo.reuse(self.load_id, &self.shared, bag) {
            return Ok(CallOutput { value, events: Vec::new() });
        }
        let ctx = self.context(ctx);
        let (output, reads) = self
            .bounded(async {
                let (mut store, func) = self.instantiate(bag, Export::Provide).await?;
                store.data_mut().reads = Some(Vec::new());
                let result =
                    call_export::<(&types::CallContext,), types::Contribution>(&mut store, func, (&ctx,))
                        .await;
                self.settle(store, result, bag)
            })
            .await?;
        let CallOutput { value, events } = self.checked(output)?;
        self.check_schemas(&value)?;
        let value = Arc::new(value);
        memo.keep(self.load_id, &self.shared, reads.map(|reads| (reads, value.clone())));
        Ok(CallOutput { value, events })
    }

    pub async fn call_tool(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        call: &types::ToolCall,
    ) -> Result<CallOutput<Result<String, String>>, PluginError> {
        let ctx = self.context(ctx);
        self.call::<(&types::CallContext, &types::ToolCall), Result<String, String>>(
            bag,
            Export::CallTool,
            (&ctx, call),
        )
        .await
    }

    pub async fn session_start(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
    ) -> Result<CallOutput<Option<String>>, PluginError> {
        let ctx = self.context(ctx);
        self.call::<(&types::CallContext,), Option<String>>(bag, Export::SessionStart, (&ctx,)).await
    }

    pub async fn user_prompt_submit(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        prompt: &str,
    ) -> Result<CallOutput<types::PromptOutcome>, PluginError> {
        let ctx = self.context(ctx);
        self.call::<(&types::CallContext, &str), types::PromptOutcome>(
            bag,
            Export::UserPromptSubmit,
            (&ctx, prompt),
        )
        .await
    }

    pub async fn pre_tool_use(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        tool_use: &types::ToolUse,
    ) -> Result<CallOutput<types::PreToolOutcome>, PluginError> {
        let ctx = self.context(ctx);
        self.call::<(&types::CallContext, &types::ToolUse), types::PreToolOutcome>(
            bag,
            Export::PreToolUse,
            (&ctx, tool_use),
        )
        .await
    }

    pub async fn post_tool_use(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        tool_use: &types::ToolUse,
        result: &types::ToolResult,
    ) -> Result<CallOutput<types::PostToolOutcome>, PluginError> {
        let ctx = self.context(ctx);
        self.call::<(&types::CallContext, &types::ToolUse, &types::ToolResult), types::PostToolOutcome>(
            bag,
            Export::PostToolUse,
            (&ctx, tool_use, result),
        )
        .await
    }

    pub async fn stop(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        reply: &str,
    ) -> Result<CallOutput<types::StopOutcome>, PluginError> {
        let ctx = self.context(ctx);
        self.call::<(&types::CallContext, &str), types::StopOutcome>(bag, Export::Stop, (&ctx, reply)).await
    }

    pub async fn command(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        name: &str,
        args: &str,
    ) -> Result<CallOutput<Result<String, String>>, PluginError> {
        let ctx = self.context(ctx);
        self.call::<(&types::CallContext, &str, &str), Result<String, String>>(
            bag,
            Export::Command,
            (&ctx, name, args),
        )
        .await
    }

    /// One call of `export` with `params` on a fresh instance: its state writes applied if
    /// it succeeded, its value capped and checked.
    async fn call<P, R>(
        &self,
        bag: &StateBag,
        export: Export,
        params: P,
    ) -> Result<CallOutput<R>, PluginError>
    where
        P: ComponentNamedList + Lower + Send + Sync,
        (R,): ComponentNamedList + Lift + Send + Sync + 'static,
        R: Checked,
    {
        let output = self
            .bounded(async {
                let (mut store, func) = self.instantiate(bag, export).await?;
                let result = call_export::<P, R>(&mut store, func, params).await;
                self.finish(store, result, bag)
            })
            .await?;
        self.checked(output)
    }

    /// Runs one whole call under the plugin's deadline: instantiating it, the export, and
    /// every host import it waits in. The epoch deadline stops guest code only; this stops a
    /// call waiting in the host (a process, a sleep, a read). At the deadline the call's
    /// future is dropped, and its store with it: none of its writes or events are kept.
    async fn bounded<T>(&self, call: impl Future<Output = Result<T, PluginError>>) -> Result<T, PluginError> {
        let deadline = std::time::Duration::from_millis(self.limits.timeout_ms);
        tokio::time::timeout(deadline, call).await.unwrap_or_else(|_| Err(self.timeout_error()))
    }

    fn timeout_error(&self) -> PluginError {
        PluginError::Timeout { plugin: self.label(), timeout_ms: self.limits.timeout_ms }
    }

    fn context(&self, ctx: &CallContext) -> types::CallContext {
        types::CallContext {
            session_id: ctx.session_id.clone(),
            config: self.config.clone(),
            model_calls: ctx.model_calls,
            turn_iteration: ctx.turn_iteration,
        }
    }

    /// Checks that every tool schema `contribution` offers is a JSON object. A plugin offers
    /// the same few schemas on every `provide`, so each text is checked once and then only
    /// recognised (parsing them all on every call was 1–2% of the load bench's CPU).
    fn check_schemas(&self, contribution: &types::Contribution) -> Result<(), PluginError> {
        for tool in &contribution.tools {
            let text = tool.parameters.as_str();
            if self.checked_schemas.find(|checked| **checked == *text).is_some() {
                continue;
            }
            if let Some(detail) = schema_problem(tool) {
                return Err(PluginError::Malformed { plugin: self.label(), detail });
            }
            self.checked_schemas.put(Arc::from(text), |checked| **checked == *text);
        }
        Ok(())
    }

    /// Caps and checks what a call returned; see [`Checked`].
    fn checked<R: Checked>(&self, mut output: CallOutput<R>) -> Result<CallOutput<R>, PluginError> {
        let max_bytes = self.limits.max_output_kb as usize * 1024;
        output
            .value
            .check(max_bytes)
            .map_err(|detail| PluginError::Malformed { plugin: self.label(), detail })?;
        Ok(output)
    }

    /// A fresh store and instance for one call of `export`, with the call's limits armed,
    /// and the export to call.
    async fn instantiate(
        &self,
        bag: &StateBag,
        export: Export,
    ) -> Result<(Store<CallState>, Func), PluginError> {
        let mut store = self.fresh_store(bag, export)?;
        let instance = self
            .pre
            .instance_pre()
            .instantiate_async(&mut store)
            .await
            .map_err(|error| self.instantiate_error(error))?;
        let func = instance.get_func(&mut store, self.exports.get(export)).ok_or_else(|| {
            PluginError::Malformed {
                plugin: self.label(),
                detail: format!("the component has no `{}` export", export.wit_name()),
            }
        })?;
        Ok((store, func))
    }

    /// A fresh store for one call of `export`: its state and limits (its WASI context is
    /// built if the call uses WASI at all, see [`CallState`]).
    fn fresh_store(&self, bag: &StateBag, export: Export) -> Result<Store<CallState>, PluginError> {
        self.calls.count(export);
        let memory = MemoryCap::new(self.limits.memory_mb as usize * 1024 * 1024);
        let state = CallState::new(
            self.identity.clone(),
            bag.clone(),
            self.read_grants.clone(),
            self.process.clone(),
            memory,
            CallCaps::new(self.limits),
            self.dirs.clone(),
        );
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|state| &mut state.memory);
        store.set_epoch_deadline(SandboxEngine::deadline_ticks(&self.limits));
        store.epoch_deadline_trap();
        Ok(store)
    }

    fn instantiate_error(&self, error: wasmtime::Error) -> PluginError {
        PluginError::Instantiate { plugin: self.label(), detail: format!("{error:#}") }
    }

    /// Ends a call: classifies a failure, or applies the state writes (only if the value
    /// says the call succeeded, see [`Checked::commits`]) and hands back the events.
    fn finish<R: Checked>(
        &self,
        store: Store<CallState>,
        result: wasmtime::Result<R>,
        bag: &StateBag,
    ) -> Result<CallOutput<R>, PluginError> {
        self.settle(store, result, bag).map(|(output, _)| output)
    }

    /// [`Self::finish`], also handing back what the call read when it declared its result
    /// reusable (see [`CallState::take_reuse`]).
    fn settle<R: Checked>(
        &self,
        store: Store<CallState>,
        result: wasmtime::Result<R>,
        bag: &StateBag,
    ) -> Result<(CallOutput<R>, Option<Vec<StateRead>>), PluginError> {
        if let Some(detail) = store.data().mount_error.clone() {
            // The call ran without a folder it was granted: whatever it returned is suspect.
            return Err(PluginError::Instantiate { plugin: self.label(), detail });
        }
        let value = result.map_err(|error| self.classify(&store, error))?;
        let mut state = store.into_data();
        let reads = state.take_reuse();
        if value.commits() {
            bag.apply(&self.identity.name, state.writes);
        }
        Ok((CallOutput { value, events: state.events }, reads))
    }

    fn classify(&self, store: &Store<CallState>, error: wasmtime::Error) -> PluginError {
        let plugin = self.label();
        let state = store.data();
        if state.memory.hit() {
            return PluginError::MemoryLimit { plugin, limit_mb: (state.memory.max_bytes() >> 20) as u32 };
        }
        if let Some(over) = state.caps.hit() {
            return PluginError::OverCap { plugin, cap: over.cap.key(), detail: state.caps.describe(over) };
        }
        let stderr = state.stderr_text();
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => self.timeout_error(),
            Some(trap) => match panic_message(&stderr) {
                Some(message) => PluginError::Panic { plugin, message },
                None if stderr.is_empty() => PluginError::Trap { plugin, detail: trap.to_string() },
                None => PluginError::Trap { plugin, detail: format!("{trap} (stderr: {stderr})") },
            },
            // Not a trap: the call returned, but its result could not be read (invalid
            // UTF-8, out-of-bounds pointers) — the plugin broke the contract.
            None => PluginError::Malformed { plugin, detail: format!("{error:#}") },
        }
    }
}

/// Calls `func` with `params`. Checks the export's type against `P` and `R` (the
/// contract's) first: cheap for one export, and what keeps the call sound.
async fn call_export<P, R>(store: &mut Store<CallState>, func: Func, params: P) -> wasmtime::Result<R>
where
    P: ComponentNamedList + Lower + Send + Sync,
    (R,): ComponentNamedList + Lift + Send + Sync + 'static,
{
    let typed = func.typed::<P, (R,)>(&*store)?;
    Ok(typed.call_async(&mut *store, params).await?.0)
}

/// The message of a Rust panic, as the guest's std printed it to stderr.
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.find("panicked at ")?;
    let rest = &stderr[start..];
    // "panicked at src/lib.rs:12:5:\nthe message\nnote: run with ..."
    let message = rest.split_once('\n').map(|(_, message)| message).unwrap_or(rest);
    let message = message.split("\nnote:").next().unwrap_or(message).trim();
    Some(if message.is_empty() { rest.trim().to_owned() } else { message.to_owned() })
}
