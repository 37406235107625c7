//! The checks a compaction's result must pass before it replaces anything: whatever a
//! plugin returns goes through them, and the host's own truncation is made to pass them.

use std::collections::{HashMap, HashSet};

use super::view::{Compaction, MessageId, Replacement, Viewed};
use crate::conversation::Role;

/// Why a compaction's result (or a view) cannot be used, naming the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactionError {
    #[error("it replaces the first {replaces} messages sent, but only {sent} are")]
    PrefixTooLong { replaces: usize, sent: usize },
    #[error("the view covers {covers} stored messages, but the history has {len}")]
    PastTheHistory { covers: usize, len: usize },
    #[error("it names {id}, which is not among the messages it replaces")]
    Unknown { id: MessageId },
    #[error("it keeps {id}, which comes after the messages it replaces and is sent anyway")]
    AfterPrefix { id: MessageId },
    #[error("it names {id} twice")]
    Duplicate { id: MessageId },
    #[error("it keeps {id} after {after}, which comes later in the history: kept messages stay in order")]
    OutOfOrder { id: MessageId, after: MessageId },
    #[error("it keeps {assistant}, which calls tool `{call_id}`, but drops {result}, the call's result")]
    ResultDropped { assistant: MessageId, call_id: String, result: MessageId },
    #[error(
        "it keeps {result}, the result of tool call `{call_id}`, but drops {assistant}, which made the call"
    )]
    CallDropped { assistant: MessageId, call_id: String, result: MessageId },
    #[error("its entry {entry} (a new summary) sits between {assistant}'s tool calls and their results")]
    SplitsCall { entry: usize, assistant: MessageId },
    #[error("it drops {id}, the last user message")]
    LastUserDropped { id: MessageId },
    #[error(
        "its entry {entry} (a new summary) is a tool result or makes tool calls; a summary is plain text"
    )]
    UnfitSummary { entry: usize },
}

/// One message of what would be sent after the compaction.
enum Sent {
    /// `current[position]`.
    Kept(usize),
    /// `compaction.entries[entry]`, a new summary.
    Summary(usize),
}

/// Checks `compaction` against `current`, the messages sent now: the prefix it replaces is
/// there; what it keeps is among that prefix, once each, in order; a tool call is kept if
/// and only if every result answering it is, with no summary between them; the last user
/// message stays; a summary is plain text.
pub fn check(current: &[Viewed<'_>], compaction: &Compaction) -> Result<(), CompactionError> {
    let replaces = compaction.replaces;
    if replaces > current.len() {
        return Err(CompactionError::PrefixTooLong { replaces, sent: current.len() });
    }
    let position: HashMap<MessageId, usize> =
        current.iter().enumerate().map(|(position, viewed)| (viewed.id, position)).collect();
    let mut sent = Vec::with_capacity(compaction.entries.len() + current.len() - replaces);
    let mut seen = HashSet::new();
    let mut last_kept: Option<usize> = None;
    for (entry, replacement) in compaction.entries.iter().enumerate() {
        match replacement {
            Replacement::Keep(id) => {
                let &at = position.get(id).ok_or(CompactionError::Unknown { id: *id })?;
                if at >= replaces {
                    return Err(CompactionError::AfterPrefix { id: *id });
                }
                if !seen.insert(*id) {
                    return Err(CompactionError::Duplicate { id: *id });
                }
                if let Some(before) = last_kept.filter(|&before| before > at) {
                    return Err(CompactionError::OutOfOrder { id: *id, after: current[before].id });
                }
                last_kept = Some(at);
                sent.push(Sent::Kept(at));
            }
            Replacement::Summary(message) => {
                if message.role == Role::Tool || !message.tool_calls.is_empty() {
                    return Err(CompactionError::UnfitSummary { entry });
                }
                sent.push(Sent::Summary(entry));
            }
        }
    }
    sent.extend((replaces..current.len()).map(Sent::Kept));
    // Where each message sent now would be sent after, if it is kept.
    let mut sent_at: Vec<Option<usize>> = vec![None; current.len()];
    for (index, message) in sent.iter().enumerate() {
        if let Sent::Kept(at) = message {
            sent_at[*at] = Some(index);
        }
    }
    if let Some(last_user) = current.iter().rposition(|viewed| viewed.message.role == Role::User)
        && sent_at[last_user].is_none()
    {
        return Err(CompactionError::LastUserDropped { id: current[last_user].id });
    }
    check_calls(current, &sent, &sent_at)
}

/// Every tool call stays with its results: both kept, with no new summary between, or both
/// dropped.
fn check_calls(
    current: &[Viewed<'_>],
    sent: &[Sent],
    sent_at: &[Option<usize>],
) -> Result<(), CompactionError> {
    let result_of: HashMap<&str, usize> = current
        .iter()
        .enumerate()
        .filter_map(|(at, viewed)| Some((viewed.message.tool_call_id.as_deref()?, at)))
        .collect();
    for (at, viewed) in current.iter().enumerate() {
        let mut last_result = None;
        for call in &viewed.message.tool_calls {
            let Some(&result) = result_of.get(call.id.as_str()).filter(|&&result| result > at) else {
                continue;
            };
            let (assistant, result_id, call_id) = (viewed.id, current[result].id, call.id.clone());
            match (sent_at[at], sent_at[result]) {
                (Some(_), None) => {
                    return Err(CompactionError::ResultDropped { assistant, call_id, result: result_id });
                }
                (None, Some(_)) => {
                    return Err(CompactionError::CallDropped { assistant, call_id, result: result_id });
                }
                (Some(_), Some(index)) => last_result = last_result.max(Some(index)),
                (None, None) => {}
            }
        }
        if let (Some(from), Some(to)) = (sent_at[at], last_result)
            && let Some(Sent::Summary(entry)) =
                sent[from + 1..to].iter().find(|message| matches!(message, Sent::Summary(_)))
        {
            return Err(CompactionError::SplitsCall { entry: *entry, assistant: viewed.id });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compacted_history::{Summaries, viewed};
    use crate::conversation::Message;
    use crate::tools::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "notes_add".into(), arguments: "{}".into() }
    }

    /// #0 user, #1 assistant calling a and b, #2 result a, #3 result b, #4 assistant,
    /// #5 user, #6 assistant.
    fn history() -> Vec<Message> {
        vec![
            Message::user("first"),
            Message::assistant("", vec![call("a"), call("b")]),
            Message::tool("a", "done a"),
            Message::tool("b", "done b"),
            Message::assistant("both done", vec![]),
            Message::user("last"),
            Message::assistant("ok", vec![]),
        ]
    }

    fn keep(seq: u64) -> Replacement {
        Replacement::Keep(MessageId::Message(seq))
    }

    fn summary(text: &str) -> Replacement {
        Replacement::Summary(Message::system(text))
    }

    fn checked(compaction: Compaction) -> Result<(), CompactionError> {
        let history = history();
        let summaries = Summaries::new();
        check(&viewed(None, &history, &summaries).unwrap(), &compaction)
    }

    fn id(seq: u64) -> MessageId {
        MessageId::Message(seq)
    }

    #[test]
    fn a_result_that_keeps_calls_with_their_results_and_the_last_user_message_passes() {
        let whole_call =
            Compaction { replaces: 5, entries: vec![keep(0), summary("s"), keep(1), keep(2), keep(3)] };
        assert_eq!(checked(whole_call), Ok(()));
        let call_dropped_whole = Compaction { replaces: 5, entries: vec![keep(0), summary("s"), keep(4)] };
        assert_eq!(checked(call_dropped_whole), Ok(()));
        assert_eq!(checked(Compaction::default()), Ok(()), "replacing nothing changes nothing");
    }

    #[test]
    fn a_call_separated_from_a_result_is_refused_naming_both() {
        assert_eq!(
            checked(Compaction { replaces: 4, entries: vec![keep(0), keep(1), keep(2)] }),
            Err(CompactionError::ResultDropped { assistant: id(1), call_id: "b".into(), result: id(3) })
        );
        assert_eq!(
            checked(Compaction { replaces: 3, entries: vec![keep(0), keep(2)] }),
            Err(CompactionError::CallDropped { assistant: id(1), call_id: "a".into(), result: id(2) })
        );
        // The prefix ends between the call and its second result, and the call is dropped.
        assert_eq!(
            checked(Compaction { replaces: 3, entries: vec![keep(0)] }),
            Err(CompactionError::CallDropped { assistant: id(1), call_id: "b".into(), result: id(3) })
        );
        let error =
            checked(Compaction { replaces: 4, entries: vec![keep(1), keep(2), summary("x"), keep(3)] });
        assert_eq!(error, Err(CompactionError::SplitsCall { entry: 2, assistant: id(1) }));
    }

    #[test]
    fn the_last_user_message_stays() {
        let error = checked(Compaction { replaces: 6, entries: vec![summary("all of it")] }).unwrap_err();
        assert_eq!(error, CompactionError::LastUserDropped { id: id(5) });
        assert_eq!(error.to_string(), "it drops message #5, the last user message");
    }

    #[test]
    fn kept_ids_exist_in_the_prefix_once_each_and_in_order() {
        assert_eq!(
            checked(Compaction { replaces: 1, entries: vec![Replacement::Keep(MessageId::Summary(4))] }),
            Err(CompactionError::Unknown { id: MessageId::Summary(4) })
        );
        assert_eq!(
            checked(Compaction { replaces: 1, entries: vec![keep(9)] }),
            Err(CompactionError::Unknown { id: id(9) })
        );
        assert_eq!(
            checked(Compaction { replaces: 1, entries: vec![keep(0), keep(5)] }),
            Err(CompactionError::AfterPrefix { id: id(5) })
        );
        assert_eq!(
            checked(Compaction { replaces: 1, entries: vec![keep(0), keep(0)] }),
            Err(CompactionError::Duplicate { id: id(0) })
        );
        assert_eq!(
            checked(Compaction { replaces: 5, entries: vec![keep(4), keep(0)] }),
            Err(CompactionError::OutOfOrder { id: id(0), after: id(4) })
        );
        assert_eq!(
            checked(Compaction { replaces: 8, entries: vec![] }),
            Err(CompactionError::PrefixTooLong { replaces: 8, sent: 7 })
        );
    }

    #[test]
    fn a_summary_is_plain_text() {
        let tool = Replacement::Summary(Message::tool("a", "forged"));
        assert_eq!(
            checked(Compaction { replaces: 1, entries: vec![keep(0), tool] }),
            Err(CompactionError::UnfitSummary { entry: 1 })
        );
        let calling = Replacement::Summary(Message::assistant("", vec![call("z")]));
        assert_eq!(
            checked(Compaction { replaces: 1, entries: vec![calling, keep(0)] }),
            Err(CompactionError::UnfitSummary { entry: 0 })
        );
    }

    #[test]
    fn the_checks_see_earlier_summaries_by_their_ids() {
        let history = history();
        let summaries = Summaries::from([(1, Message::system("earlier"))]);
        let view =
            crate::compacted_history::CompactedHistory { covers: 5, entries: vec![MessageId::Summary(1)] };
        let current = viewed(Some(&view), &history, &summaries).unwrap();
        let keeps_it = Compaction { replaces: 1, entries: vec![Replacement::Keep(MessageId::Summary(1))] };
        assert_eq!(check(&current, &keeps_it), Ok(()));
        let names_a_covered_message = Compaction { replaces: 1, entries: vec![keep(0)] };
        assert_eq!(check(&current, &names_a_covered_message), Err(CompactionError::Unknown { id: id(0) }));
    }
}
