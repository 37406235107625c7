//! The `judge` exports (since 0.2.7): `spec` as the host's capability flags, the verdicts
//! converted to the host's types.

use wasmtime::Store;
use wasmtime::component::Func;

use super::exports::agent_host::plugin::judge as wit;
use super::host;
use crate::plugins::types::{Exports, JudgedStop, ReviewVerdict, TurnVerdict};
use crate::runtime::CallState;

pub(in crate::plugins::contract) async fn judge_spec(
    store: &mut Store<CallState>,
    func: Func,
    config: &str,
) -> wasmtime::Result<Exports> {
    let spec = super::super::call::<_, wit::JudgeSpec>(store, func, (config,)).await?;
    let pairs =
        [(spec.turn_end, Exports::TURN_END), (spec.review, Exports::REVIEW), (spec.queued, Exports::QUEUED)];
    Ok(pairs.into_iter().filter(|(on, _)| *on).fold(Exports::empty(), |all, (_, flag)| all | flag))
}

pub(in crate::plugins::contract) async fn turn_end(
    store: &mut Store<CallState>,
    func: Func,
    ctx: &host::CallContext,
    config: &str,
    reply: &str,
) -> wasmtime::Result<TurnVerdict> {
    let ctx = super::call_context(ctx, config);
    let verdict = super::super::call::<_, wit::TurnVerdict>(store, func, (&ctx, reply)).await?;
    Ok(match verdict {
        wit::TurnVerdict::End => TurnVerdict::End,
        wit::TurnVerdict::Continue(text) => TurnVerdict::Continue(text),
        wit::TurnVerdict::Stop(stop) => TurnVerdict::Stop {
            reason: match stop.reason {
                wit::StopReason::NeedInput => JudgedStop::NeedInput,
                wit::StopReason::Blocked => JudgedStop::Blocked,
                wit::StopReason::TokenBudget => JudgedStop::TokenBudget,
                wit::StopReason::TimeBudget => JudgedStop::TimeBudget,
            },
            message: stop.message,
        },
    })
}

pub(in crate::plugins::contract) async fn review(
    store: &mut Store<CallState>,
    func: Func,
    ctx: &host::CallContext,
    config: &str,
    used: &host::ToolUse,
    asked: &str,
) -> wasmtime::Result<ReviewVerdict> {
    let (ctx, used) = (super::call_context(ctx, config), super::tool_use(used));
    let verdict = super::super::call::<_, wit::ReviewVerdict>(store, func, (&ctx, &used, asked)).await?;
    Ok(match verdict {
        wit::ReviewVerdict::Abstain => ReviewVerdict::Abstain,
        wit::ReviewVerdict::Allow => ReviewVerdict::Allow,
        wit::ReviewVerdict::Deny(reason) => ReviewVerdict::Deny(reason),
        wit::ReviewVerdict::Error(error) => ReviewVerdict::Error(error),
    })
}

pub(in crate::plugins::contract) async fn queued(
    store: &mut Store<CallState>,
    func: Func,
    ctx: &host::CallContext,
    config: &str,
) -> wasmtime::Result<Option<String>> {
    let ctx = super::call_context(ctx, config);
    super::super::call(store, func, (&ctx,)).await
}
