//! The request's `messages`: the history's messages grouped into turns that alternate from
//! the user, each call's results in the turn after it, the injected messages at the end,
//! and the history's prompt-cache breakpoint. Decided on every call from the kept
//! encodings of the messages (`wire.rs`), since a message's turn depends on its neighbours.

use serde::ser::{Serialize, SerializeSeq, Serializer};
use serde_json::value::RawValue;

use super::wire::{Kind, is_empty, text_block, user_block, wire_id};
use crate::model::{Message, Role};
use crate::tools::ToolCall;

#[derive(Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum Side {
    User,
    Assistant,
}

impl Side {
    fn of(message: &Message) -> Self {
        if message.role == Role::Assistant { Side::Assistant } else { Side::User }
    }
}

/// One message of the request: a role and its blocks.
#[derive(serde::Serialize)]
pub(super) struct Turn<'a> {
    role: Side,
    content: Content<'a>,
}

enum Content<'a> {
    /// One assistant message's blocks, as kept.
    Whole(&'a RawValue),
    Parts(Vec<Part<'a>>),
}

enum Part<'a> {
    /// A block as kept, with the message it encodes when that is a user-side one (to encode
    /// it again with a breakpoint).
    Kept { json: &'a RawValue, source: Option<&'a Message> },
    /// A block encoded in this call's body.
    Block(Kind<'a>),
}

impl Serialize for Content<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Whole(json) => json.serialize(serializer),
            Content::Parts(parts) => {
                let mut seq = serializer.serialize_seq(Some(parts.len()))?;
                for part in parts {
                    match part {
                        Part::Kept { json, .. } => seq.serialize_element(json)?,
                        Part::Block(block) => seq.serialize_element(block)?,
                    }
                }
                seq.end()
            }
        }
    }
}

/// What stands in for the result of a call the history has none for (Messages refuses a
/// `tool_use` without its `tool_result`).
pub(super) const NO_RESULT: &str = "no result was recorded for this call";

/// What opens a history that starts with the assistant (Messages wants the user first).
pub(super) const OPENING: &str = "(the conversation so far follows)";

/// The request's messages: the history in alternating turns, then the injected messages in
/// the last user turn. The last block of the history's last user turn carries the
/// breakpoint, so the next call, whose history only grew, reads all of it from the cache.
pub(super) fn turns<'a>(
    history: &'a [Message],
    kept: &'a [Box<RawValue>],
    injected: &'a [Message],
) -> Vec<Turn<'a>> {
    let said: Vec<(&Message, &RawValue)> = history
        .iter()
        .zip(kept)
        .map(|(message, json)| (message, &**json))
        .filter(|(_, json)| !is_empty(json))
        .collect();
    let mut turns = Vec::new();
    // The calls of the last assistant turn, which the next user turn must answer.
    let mut calls: Vec<&ToolCall> = Vec::new();
    for run in said.chunk_by(|(a, _), (b, _)| Side::of(a) == Side::of(b)) {
        if Side::of(run[0].0) == Side::Assistant {
            if !calls.is_empty() {
                turns.push(Turn { role: Side::User, content: Content::Parts(answers(&calls, &[])) });
            }
            calls = run.iter().flat_map(|(message, _)| &message.tool_calls).collect();
            turns.push(Turn { role: Side::Assistant, content: assistant_content(run) });
        } else {
            turns.push(Turn { role: Side::User, content: Content::Parts(answers(&calls, run)) });
            calls.clear();
        }
    }
    if !calls.is_empty() {
        turns.push(Turn { role: Side::User, content: Content::Parts(answers(&calls, &[])) });
    }
    if turns.first().is_some_and(|turn| turn.role == Side::Assistant) {
        let opening = Kind::Text { text: OPENING.into(), cache_control: None };
        turns.insert(0, Turn { role: Side::User, content: Content::Parts(vec![Part::Block(opening)]) });
    }
    if let Some(Turn { content: Content::Parts(parts), .. }) =
        turns.iter_mut().rev().find(|turn| turn.role == Side::User)
        && let Some(last) = parts.pop()
    {
        parts.push(with_breakpoint(last));
    }
    let injected: Vec<Part<'a>> =
        injected.iter().filter_map(|message| text_block(&message.content)).map(Part::Block).collect();
    if !injected.is_empty() {
        match turns.last_mut() {
            Some(Turn { role: Side::User, content: Content::Parts(parts) }) => parts.extend(injected),
            _ => turns.push(Turn { role: Side::User, content: Content::Parts(injected) }),
        }
    }
    turns
}

/// An assistant turn: one message's blocks as kept, or several messages' in one list.
fn assistant_content<'a>(run: &[(&'a Message, &'a RawValue)]) -> Content<'a> {
    if let [(_, json)] = run {
        return Content::Whole(json);
    }
    let blocks = run.iter().flat_map(|(_, json)| {
        serde_json::from_str::<Vec<&RawValue>>(json.get()).expect("an assistant message is kept as a list")
    });
    Content::Parts(blocks.map(|json| Part::Kept { json, source: None }).collect())
}

/// A user turn after `calls`: each call's result in the calls' order (a stand-in where
/// the history has none), then any result that answers none of them (as text: Messages
/// refuses a `tool_result` for a call it did not just see), then the turn's other messages.
fn answers<'a>(calls: &[&'a ToolCall], run: &[(&'a Message, &'a RawValue)]) -> Vec<Part<'a>> {
    let mut results: Vec<Option<(&Message, &RawValue)>> =
        run.iter().copied().filter(|(message, _)| message.role == Role::Tool).map(Some).collect();
    let mut parts = Vec::with_capacity(calls.len() + run.len());
    for call in calls {
        let id = wire_id(&call.id);
        let answering = results.iter_mut().find(|result| {
            result.is_some_and(|(message, _)| {
                wire_id(message.tool_call_id.as_deref().unwrap_or_default()) == id
            })
        });
        parts.push(match answering.and_then(Option::take) {
            Some((message, json)) => Part::Kept { json, source: Some(message) },
            None => Part::Block(Kind::ToolResult {
                tool_use_id: id,
                content: NO_RESULT,
                is_error: true,
                cache_control: None,
            }),
        });
    }
    for (message, _) in results.into_iter().flatten() {
        let id = message.tool_call_id.as_deref().unwrap_or_default();
        let text = format!(
            "(the result of the tool call `{id}`, which is no longer in the conversation)\n{}",
            message.content
        );
        parts.push(Part::Block(Kind::Text { text: text.into(), cache_control: None }));
    }
    let others = run.iter().filter(|(message, _)| message.role != Role::Tool);
    parts.extend(others.map(|&(message, json)| Part::Kept { json, source: Some(message) }));
    parts
}

/// `part` with a cache breakpoint: a kept block is encoded again from its message.
fn with_breakpoint(part: Part<'_>) -> Part<'_> {
    match part {
        Part::Kept { source: Some(message), .. } => {
            let block = user_block(message).expect("only messages with something to say are kept as parts");
            Part::Block(block.with_breakpoint())
        }
        Part::Block(block) => Part::Block(block.with_breakpoint()),
        kept @ Part::Kept { source: None, .. } => kept,
    }
}
