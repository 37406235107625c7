//! Reads a streamed Messages reply into a [`ModelReply`]: the events by the one SSE reader
//! (`model/sse.rs`), each event's JSON through the [`Assembler`]. Generic over the byte
//! stream, so the tests can feed it chunks cut anywhere.
//!
//! The events (`events.rs`): `message_start` (the prompt's usage), `content_block_start` /
//! `_delta` / `_stop` for each block of the reply (text, a tool call whose input streams as
//! JSON fragments, thinking), `message_delta` (why it stopped, the reply's usage),
//! `message_stop`, `ping`, and `error` when the endpoint gives up mid-reply.

use futures_util::{Stream, StreamExt};

use super::events::{Delta, Event, StartedBlock, WireUsage, cut, stop_reason};
use crate::events::TokenUsage;
use crate::model::sse::{self, SseError};
use crate::model::{ModelReply, StopReason};
use crate::tools::ToolCall;

/// Tool calls one reply may carry; more is a broken endpoint, not a plan.
pub(super) const MAX_TOOL_CALLS: usize = 128;
/// Content blocks one reply may have, of any kind.
const MAX_BLOCKS: usize = 1024;

/// Why a stream did not give a whole reply, with what it gave until then.
#[derive(Debug)]
pub(super) struct Interrupted<E> {
    pub cause: Cause<E>,
    /// The text, reasoning and usage that arrived; no tool call, which may be incomplete.
    pub partial: ModelReply,
}

#[derive(Debug)]
pub(super) enum Cause<E> {
    /// The byte stream failed: the connection, a timeout, the body's cap.
    Transport(E),
    /// The endpoint sent something that is not a Messages stream, or an event past
    /// `sse_line_kb`: the detail says which.
    Unreadable(String),
    /// The endpoint sent an `error` event.
    Endpoint { kind: String, message: String },
    /// The stream ended before the reply did.
    Ended,
}

/// Reads the whole stream; text deltas go to `on_text` as they come. One event (all its
/// lines) longer than `max_event_bytes` is an error, found as the bytes arrive.
pub(super) async fn read<S, B, E>(
    bytes: S,
    max_event_bytes: usize,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<ModelReply, Interrupted<E>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    let mut events = std::pin::pin!(sse::data_events(bytes, max_event_bytes));
    let mut assembler = Assembler::default();
    while !assembler.stopped {
        let Some(event) = events.next().await else { break };
        let pushed = match event {
            Ok(data) => assembler.push(&data),
            Err(SseError::Transport(error)) => Err(Cause::Transport(error)),
            Err(SseError::Unreadable(detail)) => Err(Cause::Unreadable(detail)),
        };
        match pushed {
            Ok(Some(text)) => on_text(text),
            Ok(None) => {}
            Err(cause) => return Err(Interrupted { cause, partial: assembler.partial() }),
        }
    }
    if !assembler.finished() {
        return Err(Interrupted { cause: Cause::Ended, partial: assembler.partial() });
    }
    Ok(assembler.finish())
}

/// Accumulates the events of one reply. Pure: no I/O.
#[derive(Debug, Default)]
pub(super) struct Assembler {
    text: String,
    reasoning: String,
    /// The blocks by the index the endpoint gave them, in the order they started.
    blocks: Vec<(u64, Block)>,
    calls: usize,
    stop: Option<StopReason>,
    usage: Option<WireUsage>,
    /// `message_stop` arrived.
    stopped: bool,
}

#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        input: String,
    },
    Thinking,
    /// A kind the host does not read (redacted thinking, server tools' blocks).
    Other,
}

impl Assembler {
    /// Takes in one event's data; the text it adds, if any, for the caller to show.
    pub(super) fn push<E>(&mut self, data: &str) -> Result<Option<&str>, Cause<E>> {
        let event: Event = serde_json::from_str(data).map_err(|error| {
            Cause::Unreadable(format!("an event is not a Messages event ({error}): {}", cut(data)))
        })?;
        match event {
            Event::MessageStart { message } => self.add_usage(message.usage),
            Event::ContentBlockStart { index, content_block } => return self.start(index, content_block),
            Event::ContentBlockDelta { index, delta } => return self.delta(index, delta),
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop = Some(stop_reason(&reason));
                }
                self.add_usage(usage);
            }
            Event::MessageStop => self.stopped = true,
            Event::Error { error } => {
                return Err(Cause::Endpoint { kind: error.kind, message: error.message });
            }
            Event::ContentBlockStop | Event::Ping | Event::Unknown => {}
        }
        Ok(None)
    }

    fn add_usage(&mut self, usage: Option<WireUsage>) {
        if let Some(usage) = usage {
            self.usage = Some(self.usage.unwrap_or_default().merged(usage));
        }
    }

    fn start<E>(&mut self, index: u64, block: StartedBlock) -> Result<Option<&str>, Cause<E>> {
        if self.blocks.len() == MAX_BLOCKS {
            return Err(Cause::Unreadable(format!("the reply has more than {MAX_BLOCKS} content blocks")));
        }
        if self.blocks.iter().any(|(known, _)| *known == index) {
            return Err(Cause::Unreadable(format!("content block {index} started twice")));
        }
        let (block, text) = match block {
            StartedBlock::Text { text } => (Block::Text, Some(text)),
            StartedBlock::ToolUse { id, name } => {
                self.calls += 1;
                if self.calls > MAX_TOOL_CALLS {
                    return Err(Cause::Unreadable(format!(
                        "the reply has more than {MAX_TOOL_CALLS} tool calls"
                    )));
                }
                (Block::ToolUse { id, name, input: String::new() }, None)
            }
            StartedBlock::Thinking { thinking } => {
                self.add_reasoning(&thinking, true);
                (Block::Thinking, None)
            }
            StartedBlock::Other => (Block::Other, None),
        };
        self.blocks.push((index, block));
        Ok(match text.filter(|text| !text.is_empty()) {
            Some(text) => Some(self.add_text(&text)),
            None => None,
        })
    }

    fn delta<E>(&mut self, index: u64, delta: Delta) -> Result<Option<&str>, Cause<E>> {
        let Some((_, block)) = self.blocks.iter_mut().find(|(known, _)| *known == index) else {
            return Err(Cause::Unreadable(format!("a delta for content block {index}, which never started")));
        };
        match (block, delta) {
            (Block::Text, Delta::Text { text }) => return Ok(Some(self.add_text(&text))),
            (Block::ToolUse { input, .. }, Delta::InputJson { partial_json }) => {
                input.push_str(&partial_json)
            }
            (Block::Thinking, Delta::Thinking { thinking }) => self.add_reasoning(&thinking, false),
            // Signatures, citations, blocks the host does not read.
            (_, Delta::Other) | (Block::Other, _) => {}
            (_, _) => {
                return Err(Cause::Unreadable(format!(
                    "content block {index} got a delta of another kind than the block"
                )));
            }
        }
        Ok(None)
    }

    fn add_text(&mut self, text: &str) -> &str {
        let start = self.text.len();
        self.text.push_str(text);
        &self.text[start..]
    }

    /// Thinking text; a new block starts a new paragraph.
    fn add_reasoning(&mut self, text: &str, new_block: bool) {
        if new_block && !self.reasoning.is_empty() {
            self.reasoning.push_str("\n\n");
        }
        self.reasoning.push_str(text);
    }

    /// Whether the reply ended as a reply should: `message_stop`, or at least a stop reason.
    pub(super) fn finished(&self) -> bool {
        self.stopped || self.stop.is_some()
    }

    /// The reply. A tool call whose input never streamed has the input `{}`, as its
    /// `content_block_start` said.
    pub(super) fn finish(self) -> ModelReply {
        let tool_calls = self
            .blocks
            .into_iter()
            .filter_map(|(_, block)| match block {
                Block::ToolUse { id, name, input } => {
                    let arguments = if input.trim().is_empty() { "{}".to_owned() } else { input };
                    Some(ToolCall { id, name, arguments })
                }
                _ => None,
            })
            .collect();
        ModelReply {
            text: self.text,
            tool_calls,
            reasoning: self.reasoning,
            stop: self.stop.unwrap_or_default(),
            usage: self.usage.map(TokenUsage::from),
        }
    }

    /// What arrived of a reply that broke off: see [`Interrupted::partial`].
    fn partial(self) -> ModelReply {
        ModelReply { tool_calls: Vec::new(), ..self.finish() }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::stream;
    use serde_json::{Value, json};

    use super::*;

    /// `events` framed as Messages frames them: an `event:` line naming the type, the data.
    fn framed(events: &[Value]) -> String {
        events
            .iter()
            .map(|event| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap()))
            .collect()
    }

    /// A reply the way Messages streams one: a ping, text in two deltas, a tool call whose
    /// input comes in three fragments, the stop reason and the usage.
    fn a_reply() -> Vec<Value> {
        vec![
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                "content": [], "model": "claude-test", "stop_reason": null,
                "usage": {"input_tokens": 12, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 200, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Adding "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a note ✓"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_01", "name": "notes_add", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"notes\": [{\"ti"}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "tle\": \"a\"}]}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 42}}),
            json!({"type": "message_stop"}),
        ]
    }

    async fn read_chunks(chunks: Vec<Vec<u8>>) -> (Result<ModelReply, Interrupted<String>>, Vec<String>) {
        let mut shown = Vec::new();
        let mut on_text = |text: &str| shown.push(text.to_owned());
        let bytes = stream::iter(chunks.into_iter().map(Ok::<_, String>));
        let result = read(bytes, 1 << 20, &mut on_text).await;
        (result, shown)
    }

    async fn read_text(body: &str) -> (Result<ModelReply, Interrupted<String>>, Vec<String>) {
        read_chunks(vec![body.as_bytes().to_vec()]).await
    }

    #[tokio::test]
    async fn a_streamed_reply_is_read_into_text_tool_calls_stop_and_usage() {
        let (reply, shown) = read_text(&framed(&a_reply())).await;
        let reply = reply.unwrap();
        assert_eq!(
            reply,
            ModelReply {
                text: "Adding a note ✓".into(),
                tool_calls: vec![ToolCall {
                    id: "toolu_01".into(),
                    name: "notes_add".into(),
                    arguments: r#"{"notes": [{"title": "a"}]}"#.into(),
                }],
                reasoning: String::new(),
                stop: StopReason::ToolCalls,
                usage: Some(TokenUsage {
                    input_tokens: 3212,
                    output_tokens: 42,
                    cache_read_tokens: 3000,
                    cache_write_tokens: 200
                }),
            }
        );
        assert_eq!(shown, ["Adding ", "a note ✓"]);
    }

    #[tokio::test]
    async fn the_same_reply_is_read_however_the_bytes_are_cut() {
        let body = framed(&a_reply()).replace('\n', "\r\n");
        let (whole, _) = read_text(&body).await;
        let whole = whole.unwrap();
        for size in [1, 2, 3, 7, 64] {
            let chunks: Vec<Vec<u8>> = body.as_bytes().chunks(size).map(<[u8]>::to_vec).collect();
            let (reply, shown) = read_chunks(chunks).await;
            assert_eq!(reply.unwrap(), whole, "chunks of {size} bytes");
            assert_eq!(shown.concat(), whole.text);
        }
    }

    #[tokio::test]
    async fn thinking_is_kept_apart_from_the_text_and_redacted_thinking_is_skipped() {
        let events = [
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The user wants "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "a list."}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "thinking", "thinking": "Then "}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "thinking_delta", "thinking": "answer."}}),
            json!({"type": "content_block_start", "index": 3, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "Here it is."}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
            json!({"type": "message_stop"}),
        ];
        let (reply, shown) = read_text(&framed(&events)).await;
        let reply = reply.unwrap();
        assert_eq!(reply.reasoning, "The user wants a list.\n\nThen answer.");
        assert_eq!(reply.text, "Here it is.");
        assert_eq!(shown, ["Here it is."], "thinking is not shown as the reply");
        assert_eq!(reply.stop, StopReason::Done);
        assert_eq!(
            reply.usage,
            Some(TokenUsage { input_tokens: 5, output_tokens: 9, ..TokenUsage::default() })
        );
    }

    #[tokio::test]
    async fn each_stop_reason_is_named_in_the_hosts_words() {
        for (reason, expected) in [
            ("end_turn", StopReason::Done),
            ("stop_sequence", StopReason::Done),
            ("tool_use", StopReason::ToolCalls),
            ("max_tokens", StopReason::Length),
            ("refusal", StopReason::Filtered),
            ("pause_turn", StopReason::Other("pause_turn".into())),
        ] {
            let events = [
                json!({"type": "message_start", "message": {}}),
                json!({"type": "message_delta", "delta": {"stop_reason": reason}}),
                json!({"type": "message_stop"}),
            ];
            assert_eq!(read_text(&framed(&events)).await.0.unwrap().stop, expected, "{reason}");
        }
    }

    #[tokio::test]
    async fn an_error_event_mid_stream_ends_the_read_with_its_kind_and_what_arrived() {
        let mut events = a_reply()[..5].to_vec();
        events.push(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
        events.extend(a_reply()[5..].iter().cloned());
        let (result, shown) = read_text(&framed(&events)).await;
        let interrupted = result.unwrap_err();
        assert!(
            matches!(&interrupted.cause, Cause::Endpoint { kind, message } if kind == "overloaded_error" && message == "Overloaded"),
            "{:?}",
            interrupted.cause
        );
        assert_eq!(interrupted.partial.text, "Adding a note ✓");
        assert_eq!(interrupted.partial.usage.unwrap().cache_read_tokens, 3000);
        assert_eq!(shown.concat(), "Adding a note ✓");
    }

    #[tokio::test]
    async fn a_stream_that_ends_early_or_breaks_gives_what_arrived_without_the_unfinished_call() {
        let events = a_reply();
        let (result, _) = read_text(&framed(&events[..9])).await;
        let interrupted = result.unwrap_err();
        assert!(matches!(interrupted.cause, Cause::Ended), "{:?}", interrupted.cause);
        assert_eq!(interrupted.partial.text, "Adding a note ✓");
        assert!(interrupted.partial.tool_calls.is_empty(), "half a call is never handed on");

        let mut shown = Vec::new();
        let mut on_text = |text: &str| shown.push(text.to_owned());
        let first = framed(&events[..5]).into_bytes();
        let broken = stream::iter([Ok(first), Err("connection reset".to_owned())]);
        let interrupted = read(broken, 1 << 20, &mut on_text).await.unwrap_err();
        assert!(matches!(&interrupted.cause, Cause::Transport(error) if error == "connection reset"));
        assert_eq!(interrupted.partial.text, "Adding a note ✓");

        let mut without_stop = events.clone();
        without_stop.pop();
        assert!(read_text(&framed(&without_stop)).await.0.is_ok(), "a stop reason is enough of an ending");
    }

    #[tokio::test]
    async fn what_is_not_a_messages_stream_is_refused_with_what_it_was() {
        let cases = [
            (
                framed(&[
                    json!({"type": "content_block_delta", "index": 4, "delta": {"type": "text_delta", "text": "x"}}),
                ]),
                "never started",
            ),
            (
                framed(&[
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{"}}),
                ]),
                "another kind",
            ),
            (
                framed(&[
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                ]),
                "started twice",
            ),
            ("data: {\"choices\": [\n\n".to_owned(), "not a Messages event"),
        ];
        for (body, expected) in cases {
            match read_text(&body).await.0.unwrap_err().cause {
                Cause::Unreadable(detail) => assert!(detail.contains(expected), "{detail}"),
                other => panic!("{other:?} for {body}"),
            }
        }
    }

    #[tokio::test]
    async fn an_event_past_the_cap_is_refused_as_it_arrives() {
        let mut on_text = |_: &str| {};
        let endless = stream::iter([Ok::<_, String>(b"data: \"".to_vec())])
            .chain(stream::repeat_with(|| Ok(vec![b'x'; 4096])));
        let interrupted = read(endless, 64 * 1024, &mut on_text).await.unwrap_err();
        assert!(
            matches!(&interrupted.cause, Cause::Unreadable(detail) if detail.contains("longer than 64 KiB")),
            "{:?}",
            interrupted.cause
        );
    }
}
