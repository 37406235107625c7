//! The `judge` exports (contract 0.2.7) as the host calls them: `spec` once per load, and
//! on a fresh instance each `turn-end`, `review` and `queued` a session asks.

use wasmtime::Store;

use super::calls::PluginOutput;
use super::error::PluginError;
use super::export::Export;
use super::loaded::{Linked, LoadedPlugin, PluginBounds};
use super::types::{CallContext, Exports, ReviewVerdict, ToolUse, TurnVerdict};
use crate::runtime::CallState;
use crate::state::StateBag;

impl LoadedPlugin {
    /// `turn-end`: whether the turn the model would end goes on, ends, or stops with a reason.
    pub async fn turn_end(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        reply: &str,
    ) -> Result<PluginOutput<TurnVerdict>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.turn_end(store, func, ctx, &self.config, reply).await
        };
        self.linked.invoke(&self.bounds, bag, Export::TurnEnd, Some(ctx), call).await
    }

    /// `review`: the plugin's verdict on a call the permission hooks would ask about, `asked`
    /// being why.
    pub async fn review(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        tool_use: &ToolUse,
        asked: &str,
    ) -> Result<PluginOutput<ReviewVerdict>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.review(store, func, ctx, &self.config, tool_use, asked).await
        };
        self.linked.invoke(&self.bounds, bag, Export::Review, Some(ctx), call).await
    }

    /// `queued`: a prompt to run as a turn after an operator command.
    pub async fn queued(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
    ) -> Result<PluginOutput<Option<String>>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.queued(store, func, ctx, &self.config).await
        };
        self.linked.invoke(&self.bounds, bag, Export::Queued, Some(ctx), call).await
    }
}

impl Linked {
    /// The `judge` interface's `spec` under the configuration `configure` returned: which of
    /// its functions the plugin implements.
    pub(super) async fn judge_spec(
        &self,
        bounds: &PluginBounds,
        bag: &StateBag,
        config: &str,
    ) -> Result<Exports, PluginError> {
        let call =
            async |store: &mut Store<CallState>, func| self.guest.judge_spec(store, func, config).await;
        Ok(self.invoke(bounds, bag, Export::JudgeSpec, None, call).await?.value)
    }
}
