//! The compaction switches: `compact`, `pre_compact` and `post_compact` each make misbehave
//! implement that hook (and only while set), in the way the switch names.

use agent_host_sdk::compaction::{
    Compacted, Compaction, CompactionBudget, CompactionHooks, HistoryMessage, MessageId, MessageRole,
    PreCompactOutcome, Replacement, SummaryMessage,
};
use agent_host_sdk::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{Config, Ctx};

/// What `compact` does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactSwitch {
    /// Keeps the first assistant message with tool calls but drops its result.
    SplitCall,
    /// Replaces nothing and adds a summary of `limit * 4 + 100` bytes: over the limit.
    OverBudget,
    /// Panics.
    Trap,
    /// Refuses: `misbehave refuses to compact`.
    Error,
    /// A valid compaction: everything before the last user message becomes one summary,
    /// `misbehave summary`.
    DropAll,
}

/// What `pre_compact` does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreCompactSwitch {
    /// Vetoes: `misbehave vetoes`.
    Veto,
    /// Asks to keep `message(0)`, the history's first message.
    KeepFirst,
}

/// What `post_compact` does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PostCompactSwitch {
    /// Stores what the compaction did under `last_compacted` and counts the calls under
    /// `post_compact_calls`.
    Record,
}

/// The hooks the configuration's switches turn on.
pub fn hooks(config: &Config) -> CompactionHooks {
    let mut hooks = CompactionHooks::empty();
    if config.compact.is_some() {
        hooks |= CompactionHooks::COMPACT;
    }
    if config.pre_compact.is_some() {
        hooks |= CompactionHooks::PRE_COMPACT;
    }
    if config.post_compact.is_some() {
        hooks |= CompactionHooks::POST_COMPACT;
    }
    hooks
}

pub fn compact(
    ctx: &Ctx,
    history: &[HistoryMessage],
    budget: &CompactionBudget,
) -> Result<Option<Compaction>, String> {
    match ctx.config.compact {
        None => Ok(None),
        Some(CompactSwitch::SplitCall) => split_call(history).map(Some),
        Some(CompactSwitch::OverBudget) => {
            let text = "x".repeat(budget.limit as usize * 4 + 100);
            Ok(Some(Compaction {
                replaces: 0,
                entries: vec![Replacement::Summary(SummaryMessage::user(text))],
                note: "misbehave went over the budget".to_owned(),
            }))
        }
        Some(CompactSwitch::Trap) => panic!("misbehave panicked in compact on purpose"),
        Some(CompactSwitch::Error) => Err("misbehave refuses to compact".to_owned()),
        Some(CompactSwitch::DropAll) => Ok(drop_all(history)),
    }
}

/// Keeps everything up to the first tool result but that result, whose call it keeps.
fn split_call(history: &[HistoryMessage]) -> Result<Compaction, String> {
    let result = history
        .iter()
        .enumerate()
        .position(|(at, message)| {
            message.tool_call_id.as_deref().is_some_and(|id| {
                history[..at].iter().any(|caller| caller.tool_calls.iter().any(|call| call.id == id))
            })
        })
        .ok_or("misbehave found no tool call with its result to split")?;
    let entries = history[..result].iter().map(|message| Replacement::Keep(message.id)).collect();
    Ok(Compaction {
        replaces: result as u32 + 1,
        entries,
        note: "misbehave split a tool call from its result".to_owned(),
    })
}

/// Everything before the last user message as one summary; none when nothing comes before it.
fn drop_all(history: &[HistoryMessage]) -> Option<Compaction> {
    let last_user = history.iter().rposition(|message| message.role == MessageRole::User)?;
    (last_user > 0).then(|| Compaction {
        replaces: last_user as u32,
        entries: vec![Replacement::Summary(SummaryMessage::user("misbehave summary"))],
        note: format!("misbehave dropped {last_user} messages"),
    })
}

pub fn pre_compact(ctx: &Ctx, _budget: &CompactionBudget) -> PreCompactOutcome {
    match ctx.config.pre_compact {
        None => PreCompactOutcome::default(),
        Some(PreCompactSwitch::Veto) => PreCompactOutcome::veto("misbehave vetoes"),
        // The hook sees the budget only, so the history's first message is named blind.
        Some(PreCompactSwitch::KeepFirst) => PreCompactOutcome::keep([MessageId::Message(0)]),
    }
}

pub fn post_compact(ctx: &Ctx, done: &Compacted) {
    if ctx.config.post_compact != Some(PostCompactSwitch::Record) {
        return;
    }
    let record = json!({
        "reason": done.reason.as_str(),
        "strategy": done.strategy,
        "note": done.note,
        "tokens_before": done.tokens_before,
        "tokens_after": done.tokens_after,
        "replaced": done.replaced,
        "summaries": done.summaries,
    });
    let recorded = state::get_or_default::<u64>("post_compact_calls")
        .and_then(|calls| state::set("post_compact_calls", &(calls + 1)))
        .and_then(|()| state::set("last_compacted", &record));
    if let Err(error) = recorded {
        log::warn(&format!("misbehave cannot record the compaction: {error}"));
    }
}

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests {
    use agent_host_sdk::compaction::CompactionReason;
    use agent_host_sdk::testing::{Harness, History, budget, stored};

    use super::*;

    fn misbehave(config: Value) -> Harness<Config> {
        Harness::new(crate::plugin(), config).expect("the config is accepted")
    }

    fn history() -> Vec<HistoryMessage> {
        History::new()
            .system("opening")
            .user("first")
            .calls("", &[("c1", "echo", r#"{"text":"hi"}"#)])
            .result("c1", "hi")
            .user("last")
            .assistant("ok")
            .build()
    }

    #[test]
    fn a_switch_turns_its_hook_on_and_only_then() {
        assert_eq!(misbehave(json!({})).spec().hooks, CompactionHooks::empty());
        let all = misbehave(json!({"compact": "error", "pre_compact": "veto", "post_compact": "record"}));
        assert_eq!(all.spec().hooks, CompactionHooks::all());
        let error = Harness::new(crate::plugin(), json!({"compact": "sometimes"})).err().unwrap();
        assert!(error.starts_with("`compact`: unknown variant `sometimes`"), "{error}");
    }

    #[test]
    fn the_compact_switches_answer_as_named() {
        let history = history();
        let budget = budget(&history, 1000, 10);
        let split = misbehave(json!({"compact": "split_call"})).compact(&history, &budget).unwrap().unwrap();
        assert_eq!(split.replaces, 4);
        assert_eq!(split.kept().collect::<Vec<_>>(), [0, 1, 2].map(MessageId::Message));
        let over = misbehave(json!({"compact": "over_budget"})).compact(&history, &budget).unwrap().unwrap();
        assert_eq!(over.summaries().next().unwrap().content.len(), 140);
        let refused = misbehave(json!({"compact": "error"})).compact(&history, &budget);
        assert_eq!(refused, Err("misbehave refuses to compact".to_owned()));
        let dropped = misbehave(json!({"compact": "drop_all"})).compact(&history, &budget).unwrap().unwrap();
        assert_eq!(dropped.replaces, 4);
        assert_eq!(dropped.entries, [Replacement::Summary(SummaryMessage::user("misbehave summary"))]);
    }

    #[test]
    #[should_panic(expected = "misbehave panicked in compact on purpose")]
    fn the_trap_switch_panics() {
        let history = history();
        let _ = misbehave(json!({"compact": "trap"})).compact(&history, &budget(&history, 1000, 10));
    }

    #[test]
    fn the_pre_and_post_compact_switches_answer_as_named() {
        let history = history();
        let budget = budget(&history, 1000, 10);
        let veto = misbehave(json!({"pre_compact": "veto"})).pre_compact(&budget);
        assert_eq!(veto.veto.as_deref(), Some("misbehave vetoes"));
        let keep = misbehave(json!({"pre_compact": "keep_first"})).pre_compact(&budget);
        assert_eq!(keep, PreCompactOutcome::keep([MessageId::Message(0)]));
        let recorder = misbehave(json!({"post_compact": "record"}));
        let done = Compacted {
            reason: CompactionReason::Requested,
            strategy: "compaction".into(),
            note: "evicted 2 tool results".into(),
            tokens_before: 900,
            tokens_after: 300,
            replaced: 4,
            summaries: 2,
        };
        recorder.post_compact(&done);
        recorder.post_compact(&done);
        assert_eq!(stored("post_compact_calls"), Some(json!(2)));
        assert_eq!(
            stored("last_compacted"),
            Some(json!({"reason": "requested", "strategy": "compaction", "note": "evicted 2 tool results",
                        "tokens_before": 900, "tokens_after": 300, "replaced": 4, "summaries": 2}))
        );
    }
}
