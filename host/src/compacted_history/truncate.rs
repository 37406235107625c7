//! The host's own compaction: drop the oldest messages until what is sent fits. The
//! fallback when a plugin's result fails the checks, and the last resort when nothing else
//! brought a history under its budget.

use std::collections::{BTreeSet, HashMap};

use super::view::{Compaction, MessageId, Replacement, Viewed};
use crate::conversation::Role;

/// What [`truncate`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Truncation {
    /// The compaction to commit; one that replaces nothing when nothing had to go.
    pub compaction: Compaction,
    /// The messages dropped, oldest first.
    pub dropped: Vec<MessageId>,
    /// The size of what is sent after it, by the size function given.
    pub size: usize,
    /// Whether that is within the budget. When it is not, everything that may go went.
    pub fits: bool,
}

/// Drops the oldest of `current` (the messages sent now, each of `sizes`, in order) until
/// they add up to at most `budget`. Never dropped: everything up to the first user message
/// (the opening context), the last user message, the newest group, which the next reply
/// follows on from, and any group holding a message of `keep`. An assistant message with
/// tool calls goes together with every result answering it, never one without the other.
/// The result passes [`super::check`].
pub fn truncate(current: &[Viewed<'_>], sizes: &[usize], budget: usize, keep: &[MessageId]) -> Truncation {
    assert_eq!(sizes.len(), current.len(), "one size per message sent");
    let mut total: usize = sizes.iter().sum();
    let first_user = current.iter().position(|viewed| viewed.message.role == Role::User);
    let last_user = current.iter().rposition(|viewed| viewed.message.role == Role::User);
    let groups = groups(current);
    let mut dropped_positions = BTreeSet::new();
    let newest = groups.len().saturating_sub(1);
    for (index, group) in groups.iter().enumerate() {
        if total <= budget {
            break;
        }
        let opening = first_user.is_none_or(|first| group[0] <= first);
        let pinned = group.iter().any(|&at| Some(at) == last_user || keep.contains(&current[at].id));
        if opening || index == newest || pinned {
            continue;
        }
        total -= group.iter().map(|&at| sizes[at]).sum::<usize>();
        dropped_positions.extend(group.iter().copied());
    }
    let replaces = dropped_positions.last().map_or(0, |&last| last + 1);
    let entries = (0..replaces)
        .filter(|at| !dropped_positions.contains(at))
        .map(|at| Replacement::Keep(current[at].id))
        .collect();
    Truncation {
        compaction: Compaction { replaces, entries },
        dropped: dropped_positions.iter().map(|&at| current[at].id).collect(),
        size: total,
        fits: total <= budget,
    }
}

/// `current`'s positions in the groups that go together, in order of their first message:
/// an assistant message with tool calls and the results answering them; any other message
/// alone.
fn groups(current: &[Viewed<'_>]) -> Vec<Vec<usize>> {
    let caller: HashMap<&str, usize> = current
        .iter()
        .enumerate()
        .flat_map(|(at, viewed)| viewed.message.tool_calls.iter().map(move |call| (call.id.as_str(), at)))
        .collect();
    let mut group_of_caller: HashMap<usize, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (at, viewed) in current.iter().enumerate() {
        let answered = viewed.message.tool_call_id.as_deref().and_then(|id| caller.get(id)).copied();
        match answered.filter(|&caller| caller < at).and_then(|caller| group_of_caller.get(&caller)) {
            Some(&group) => groups[group].push(at),
            None => {
                if !viewed.message.tool_calls.is_empty() {
                    group_of_caller.insert(at, groups.len());
                }
                groups.push(vec![at]);
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compacted_history::{CompactedHistory, Summaries, apply, check, materialize, viewed};
    use crate::conversation::Message;
    use crate::tools::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "notes_add".into(), arguments: "{}".into() }
    }

    /// Ten-byte messages (by `content.len()`, padded), so budgets read as message counts.
    fn msg(mut message: Message) -> Message {
        message.content = format!("{:<10}", message.content);
        message
    }

    fn sizes(current: &[Viewed<'_>]) -> Vec<usize> {
        current.iter().map(|viewed| viewed.message.content.len()).collect()
    }

    fn ids(seqs: &[u64]) -> Vec<MessageId> {
        seqs.iter().map(|&seq| MessageId::Message(seq)).collect()
    }

    /// #0 system, #1 user, #2 assistant calling a and b, #3 a, #4 b, #5 assistant, #6 user,
    /// #7 assistant calling c, #8 c, #9 user, #10 assistant.
    fn history() -> Vec<Message> {
        [
            Message::system("context"),
            Message::user("first"),
            Message::assistant("", vec![call("a"), call("b")]),
            Message::tool("a", "ra"),
            Message::tool("b", "rb"),
            Message::assistant("done", vec![]),
            Message::user("second"),
            Message::assistant("", vec![call("c")]),
            Message::tool("c", "rc"),
            Message::user("last"),
            Message::assistant("ok", vec![]),
        ]
        .into_iter()
        .map(msg)
        .collect()
    }

    #[test]
    fn the_oldest_go_first_a_call_with_all_its_results_until_it_fits() {
        let history = history();
        let summaries = Summaries::new();
        let current = viewed(None, &history, &summaries).unwrap();
        // 110 bytes; 80 needs 30 gone: the call with its two results is the oldest group.
        let truncation = truncate(&current, &sizes(&current), 80, &[]);
        assert_eq!(truncation.dropped, ids(&[2, 3, 4]));
        assert_eq!((truncation.size, truncation.fits), (80, true));
        assert_eq!(check(&current, &truncation.compaction), Ok(()));
        let (view, added) = apply(None, truncation.compaction, 1);
        assert!(added.is_empty());
        let sent = materialize(Some(&view), &history, &summaries).unwrap();
        let contents: Vec<&str> = sent.iter().map(|message| message.content.trim_end()).collect();
        assert_eq!(contents, ["context", "first", "done", "second", "", "rc", "last", "ok"]);
    }

    #[test]
    fn a_budget_nothing_can_reach_drops_all_it_may_and_says_it_does_not_fit() {
        let history = history();
        let summaries = Summaries::new();
        let current = viewed(None, &history, &summaries).unwrap();
        let truncation = truncate(&current, &sizes(&current), 10, &[]);
        // Kept: the opening (#0, #1), the last user message (#9), the newest group (#10).
        assert_eq!(truncation.dropped, ids(&[2, 3, 4, 5, 6, 7, 8]));
        assert_eq!((truncation.size, truncation.fits), (40, false));
        assert_eq!(check(&current, &truncation.compaction), Ok(()));
    }

    #[test]
    fn what_already_fits_is_left_alone() {
        let history = history();
        let summaries = Summaries::new();
        let current = viewed(None, &history, &summaries).unwrap();
        let truncation = truncate(&current, &sizes(&current), 110, &[]);
        assert_eq!(truncation.compaction, Compaction::default());
        assert!(truncation.dropped.is_empty() && truncation.fits);
    }

    #[test]
    fn a_group_holding_a_message_to_keep_stays_and_the_next_oldest_goes_instead() {
        let history = history();
        let summaries = Summaries::new();
        let current = viewed(None, &history, &summaries).unwrap();
        // As the first test, but the call's second result must stay: its whole group does.
        let truncation = truncate(&current, &sizes(&current), 80, &ids(&[4]));
        assert_eq!(truncation.dropped, ids(&[5, 6, 7, 8]));
        assert_eq!(check(&current, &truncation.compaction), Ok(()));
    }

    #[test]
    fn a_compacted_view_is_truncated_by_its_own_ids_an_old_summary_among_the_oldest() {
        let history = history();
        let summaries = Summaries::from([(1, msg(Message::system("summary")))]);
        // Sent now: #1 user, summary 1, #5 .. #10: 80 bytes.
        let view =
            CompactedHistory { covers: 5, entries: vec![MessageId::Message(1), MessageId::Summary(1)] };
        let current = viewed(Some(&view), &history, &summaries).unwrap();
        let truncation = truncate(&current, &sizes(&current), 60, &[]);
        assert_eq!(truncation.dropped, [MessageId::Summary(1), MessageId::Message(5)]);
        assert_eq!(check(&current, &truncation.compaction), Ok(()));
        let (after, _) = apply(Some(&view), truncation.compaction, 2);
        assert_eq!(after, CompactedHistory { covers: 6, entries: vec![MessageId::Message(1)] });
    }
}
