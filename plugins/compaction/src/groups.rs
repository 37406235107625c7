//! The history in groups that go together, and the stand-in an evicted group leaves.
//!
//! A group is a run of the history that is kept, evicted or summarised whole: a plain
//! message alone, or an assistant message with tool calls together with every result
//! answering them (and, in the rare history where such spans overlap or hold other
//! messages, everything up to the last of those results). As a group is a contiguous run,
//! a new message written in place of groups never comes between a call and its result.

use std::ops::Range;

use agent_host_sdk::compaction::{HistoryMessage, MessageRole, RequestedCall};
use agent_host_sdk::grouped;

/// The longest the arguments of a call are shown, in characters.
const ARGUMENTS_SHOWN: usize = 200;

/// `history`'s groups, in order; together they cover it.
pub fn groups(history: &[HistoryMessage]) -> Vec<Range<usize>> {
    // The last position each message's group must reach: its own, or its calls' last result.
    let mut reach: Vec<usize> = (0..history.len()).collect();
    for (at, message) in history.iter().enumerate() {
        let Some(call_id) = message.tool_call_id.as_deref() else { continue };
        let caller = history[..at].iter().rposition(|m| m.tool_calls.iter().any(|call| call.id == call_id));
        if let Some(caller) = caller {
            reach[caller] = reach[caller].max(at);
        }
    }
    let mut groups = Vec::new();
    let mut start = 0;
    let mut end = 0;
    for (at, &reaches) in reach.iter().enumerate() {
        if at > end {
            groups.push(start..end + 1);
            start = at;
        }
        end = end.max(reaches).max(at);
    }
    if !history.is_empty() {
        groups.push(start..end + 1);
    }
    groups
}

/// Whether `group` is tool calls and their results only, which eviction may replace.
pub fn is_tool_calls(history: &[HistoryMessage], group: &Range<usize>) -> bool {
    history[group.clone()].iter().all(|message| {
        (message.role == MessageRole::Assistant && !message.tool_calls.is_empty())
            || message.role == MessageRole::Tool
    })
}

/// The tool results in `group`.
pub fn results(history: &[HistoryMessage], group: &Range<usize>) -> usize {
    history[group.clone()].iter().filter(|message| message.role == MessageRole::Tool).count()
}

/// What an evicted group of tool calls leaves: the assistant's own text, then one line per
/// call naming the tool, its arguments (abbreviated) and the size of the result removed.
pub fn stand_in(messages: &[HistoryMessage]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for message in messages {
        let text = message.content.trim();
        if !text.is_empty() && message.role == MessageRole::Assistant {
            lines.push(text.to_owned());
        }
        for call in &message.tool_calls {
            let answers: Vec<&HistoryMessage> =
                messages.iter().filter(|m| m.tool_call_id.as_deref() == Some(call.id.as_str())).collect();
            let fate = match answers.as_slice() {
                [] => "it had no result".to_owned(),
                [one] => format!("its result ({} chars) was removed to save context", grouped(chars(one))),
                many => {
                    let total: usize = many.iter().map(|m| chars(m)).sum();
                    format!(
                        "its {} results ({} chars) were removed to save context",
                        many.len(),
                        grouped(total)
                    )
                }
            };
            lines.push(format!("[{} — {fate}]", called(call)));
        }
        // A result whose call is not in the group: its call went in an earlier compaction.
        let answers_own = message
            .tool_call_id
            .as_deref()
            .is_some_and(|id| messages.iter().any(|m| m.tool_calls.iter().any(|call| call.id == id)));
        if message.role == MessageRole::Tool && !answers_own {
            lines.push(format!(
                "[a tool result ({} chars) was removed to save context]",
                grouped(chars(message))
            ));
        }
    }
    lines.join("\n")
}

/// ``called `name` {arguments}``, the arguments on one line and abbreviated.
pub fn called(call: &RequestedCall) -> String {
    let arguments = call.arguments.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("called `{}` {}", call.name, abbreviated(&arguments, ARGUMENTS_SHOWN))
}

/// `text` cut to at most `most` characters, with an ellipsis when it was cut.
pub fn abbreviated(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn chars(message: &HistoryMessage) -> usize {
    message.content.chars().count()
}
