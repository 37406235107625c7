//! The `compactor` exports (since 0.2.3), called by function like the `guest` ones, their
//! records converted to and from the host's compaction types.

use wasmtime::Store;
use wasmtime::component::Func;

use super::exports::agent_host::plugin::compactor as wit;
use super::host;
use crate::compacted_history::{Compaction, CompactionBudget, Done, MessageId, Reason, Replacement, Viewed};
use crate::conversation::{Message, Role};
use crate::plugins::types::{CompactorSpec, Exports, PluginCompaction, PreCompactOutcome};
use crate::runtime::CallState;

pub(in crate::plugins::contract) async fn spec(
    store: &mut Store<CallState>,
    func: Func,
    config: &str,
) -> wasmtime::Result<CompactorSpec> {
    let spec = super::super::call::<_, wit::CompactorSpec>(store, func, (config,)).await?;
    let pairs = [
        (wit::CompactionHooks::COMPACT, Exports::COMPACT),
        (wit::CompactionHooks::PRE_COMPACT, Exports::PRE_COMPACT),
        (wit::CompactionHooks::POST_COMPACT, Exports::POST_COMPACT),
    ];
    let hooks = pairs
        .into_iter()
        .filter(|(wit, _)| spec.hooks.contains(*wit))
        .fold(Exports::empty(), |all, (_, host)| all | host);
    Ok(CompactorSpec { hooks, trigger_percent: spec.trigger_percent })
}

#[allow(clippy::too_many_arguments)]
pub(in crate::plugins::contract) async fn compact(
    store: &mut Store<CallState>,
    func: Func,
    ctx: &host::CallContext,
    config: &str,
    history: &[Viewed<'_>],
    tokens: &[u32],
    budget: &CompactionBudget,
) -> wasmtime::Result<Result<Option<PluginCompaction>, String>> {
    let ctx = super::call_context(ctx, config);
    let history: Vec<wit::HistoryMessage> =
        history.iter().zip(tokens).map(|(viewed, &tokens)| history_message(viewed, tokens)).collect();
    let budget = wit_budget(budget);
    let result = super::super::call::<_, Result<Option<wit::Compaction>, String>>(
        store,
        func,
        (&ctx, history.as_slice(), &budget),
    )
    .await?;
    Ok(result.map(|compaction| compaction.map(plugin_compaction)))
}

pub(in crate::plugins::contract) async fn pre_compact(
    store: &mut Store<CallState>,
    func: Func,
    ctx: &host::CallContext,
    config: &str,
    budget: &CompactionBudget,
) -> wasmtime::Result<PreCompactOutcome> {
    let ctx = super::call_context(ctx, config);
    let outcome =
        super::super::call::<_, wit::PreCompactOutcome>(store, func, (&ctx, &wit_budget(budget))).await?;
    Ok(PreCompactOutcome { veto: outcome.veto, keep: outcome.keep.into_iter().map(host_id).collect() })
}

pub(in crate::plugins::contract) async fn post_compact(
    store: &mut Store<CallState>,
    func: Func,
    ctx: &host::CallContext,
    config: &str,
    done: &Done,
) -> wasmtime::Result<()> {
    let ctx = super::call_context(ctx, config);
    let done = wit::Compacted {
        reason: wit_reason(done.reason),
        strategy: done.strategy.clone(),
        note: done.note.clone(),
        tokens_before: done.tokens_before,
        tokens_after: done.tokens_after,
        replaced: done.replaced,
        summaries: done.summaries,
    };
    let typed = func.typed::<(&wit::CallContext, &wit::Compacted), ()>(&*store)?;
    typed.call_async(&mut *store, (&ctx, &done)).await
}

fn history_message(viewed: &Viewed<'_>, tokens: u32) -> wit::HistoryMessage {
    let message = viewed.message;
    wit::HistoryMessage {
        id: wit_id(viewed.id),
        role: match message.role {
            Role::System => wit::MessageRole::System,
            Role::User => wit::MessageRole::User,
            Role::Assistant => wit::MessageRole::Assistant,
            Role::Tool => wit::MessageRole::Tool,
        },
        content: message.content.clone(),
        tool_calls: message
            .tool_calls
            .iter()
            .map(|call| wit::RequestedCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            })
            .collect(),
        tool_call_id: message.tool_call_id.clone(),
        tokens,
    }
}

fn wit_budget(budget: &CompactionBudget) -> wit::CompactionBudget {
    wit::CompactionBudget {
        reason: wit_reason(budget.reason),
        context_window: budget.context_window,
        max_output_tokens: budget.max_output_tokens,
        fixed_tokens: budget.fixed_tokens,
        history_tokens: budget.history_tokens,
        limit: budget.limit,
        target: budget.target,
        keep: budget.keep.iter().copied().map(wit_id).collect(),
    }
}

fn wit_reason(reason: Reason) -> wit::CompactionReason {
    match reason {
        Reason::Threshold => wit::CompactionReason::Threshold,
        Reason::Requested => wit::CompactionReason::Requested,
        Reason::ContextTooLong => wit::CompactionReason::ContextTooLong,
    }
}

fn wit_id(id: MessageId) -> wit::MessageId {
    match id {
        MessageId::Message(seq) => wit::MessageId::Message(seq),
        MessageId::Summary(number) => wit::MessageId::Summary(number),
    }
}

fn host_id(id: wit::MessageId) -> MessageId {
    match id {
        wit::MessageId::Message(seq) => MessageId::Message(seq),
        wit::MessageId::Summary(number) => MessageId::Summary(number),
    }
}

/// A summary's role as the plugin gave it; a `tool` one is refused by the checks
/// (`compacted_history::check`), which name the entry.
fn plugin_compaction(compaction: wit::Compaction) -> PluginCompaction {
    let entries = compaction
        .entries
        .into_iter()
        .map(|entry| match entry {
            wit::Replacement::Keep(id) => Replacement::Keep(host_id(id)),
            wit::Replacement::Summary(summary) => {
                let role = match summary.role {
                    wit::MessageRole::System => Role::System,
                    wit::MessageRole::User => Role::User,
                    wit::MessageRole::Assistant => Role::Assistant,
                    wit::MessageRole::Tool => Role::Tool,
                };
                Replacement::Summary(Message {
                    role,
                    content: summary.content,
                    tool_calls: Vec::new(),
                    tool_call_id: None,
                })
            }
        })
        .collect();
    PluginCompaction {
        compaction: Compaction { replaces: compaction.replaces as usize, entries },
        note: compaction.note,
    }
}
