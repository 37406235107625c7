//! Reads a streamed Chat Completions reply into a [`ModelReply`]: the events by the one SSE
//! reader (`sse.rs`), each `data:` payload through the [`ReplyAssembler`]. Generic over the
//! byte stream, so tests and the fuzz targets can feed it chunks cut anywhere, without an
//! HTTP server.

use futures_util::{Stream, StreamExt};

use super::ReplyAssembler;
use crate::model::sse::{self, ENDED_EARLY, SseError};
use crate::model::{ModelError, ModelReply};

/// Why a streamed reply could not be read, and whether a new attempt may do better.
#[derive(Debug)]
pub struct Broken {
    pub error: ModelError,
    /// The connection dropped before anything was shown: the request can simply be sent
    /// again. Never true once text has streamed (that is a [`ModelError::Cut`]).
    pub retryable: bool,
}

impl Broken {
    pub fn last(error: ModelError) -> Self {
        Self { error, retryable: false }
    }
}

/// Reads the whole stream. `transport` turns an error of the byte stream itself (a dropped
/// connection, a timeout) into a [`ModelError`]; text deltas go to `on_text` as they come.
/// A stream that ends without `[DONE]` or a `finish_reason` is an error: the reply was cut
/// (a [`ModelError::Cut`] carrying what arrived, once text has streamed).
/// One event (all its lines) longer than `max_event_bytes` is an error too, found as the
/// bytes arrive.
pub async fn read_event_stream<S, B, E>(
    bytes: S,
    max_event_bytes: usize,
    transport: impl Fn(E) -> ModelError,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<ModelReply, ModelError>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    read_events(bytes, max_event_bytes, |error| Broken::last(transport(error)), on_text)
        .await
        .map_err(|broken| broken.error)
}

/// [`read_event_stream`], saying too whether a failed read may be tried again.
pub(super) async fn read_events<S, B, E>(
    bytes: S,
    max_event_bytes: usize,
    transport: impl Fn(E) -> Broken,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<ModelReply, Broken>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    let mut events = std::pin::pin!(sse::data_events(bytes, max_event_bytes));
    let mut assembler = ReplyAssembler::default();
    let mut streamed_text = false;
    while let Some(event) = events.next().await {
        let data = match event {
            Ok(data) => data,
            Err(SseError::Transport(error)) => return cut_short(assembler, streamed_text, transport(error)),
            Err(SseError::Unreadable(detail)) => return Err(Broken::last(ModelError::Stream { detail })),
        };
        if data.trim() == "[DONE]" {
            return Ok(assembler.finish());
        }
        if let Some(text) = assembler.push_chunk(&data).map_err(Broken::last)? {
            streamed_text = true;
            on_text(&text);
        }
    }
    let early = Broken { error: ModelError::Stream { detail: ENDED_EARLY.into() }, retryable: true };
    cut_short(assembler, streamed_text, early)
}

/// The outcome of a stream that stopped before `[DONE]`: the reply, when a `finish_reason`
/// had already said it was complete (only a trailing usage chunk or `[DONE]` was lost, or
/// never sent); else a [`ModelError::Cut`] with what arrived, when text was shown; else
/// `broken` as it is.
fn cut_short(assembler: ReplyAssembler, streamed_text: bool, broken: Broken) -> Result<ModelReply, Broken> {
    if assembler.finished() {
        return Ok(assembler.finish());
    }
    if !streamed_text {
        return Err(broken);
    }
    let detail = broken.error.into_cut_detail();
    Err(Broken::last(ModelError::Cut { detail, partial: Box::new(assembler.finish()) }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::TokenUsage;
    use crate::model::StopReason;

    /// A fixture of `tests/fixtures/openai/`, as the server sent it.
    fn fixture(name: &str) -> Vec<u8> {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/openai").join(name);
        std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    }

    /// Reads `bytes` in chunks of 7 bytes (cut inside lines and characters), then `tail`.
    fn read(bytes: &[u8], tail: Option<std::io::Error>) -> (Result<ModelReply, Broken>, String) {
        let mut chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            bytes.chunks(7).map(|c| Ok(c.to_vec())).collect();
        chunks.extend(tail.map(Err));
        let mut streamed = String::new();
        let mut on_text = |text: &str| streamed.push_str(text);
        let transport = |error: std::io::Error| Broken {
            error: ModelError::Stream { detail: error.to_string() },
            retryable: true,
        };
        let future = read_events(futures_util::stream::iter(chunks), 1 << 20, transport, &mut on_text);
        let reply = tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(future);
        (reply, streamed)
    }

    fn reply_of(name: &str) -> ModelReply {
        read(&fixture(name), None).0.unwrap_or_else(|broken| panic!("{name}: {}", broken.error))
    }

    fn usage(input_tokens: u64, output_tokens: u64, cache_read_tokens: u64) -> Option<TokenUsage> {
        Some(TokenUsage { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens: 0 })
    }

    #[test]
    fn llama_cpp_cut_at_its_length_mid_arguments() {
        let reply = reply_of("llama.cpp-length-mid-arguments.sse");
        assert_eq!(reply.stop, StopReason::Length);
        assert_eq!(reply.usage, usage(412, 16, 0));
        assert_eq!(reply.tool_calls[0].id, "kVqTx3rW0cBQm1aOeZ8yHn2LsJdPf7Gu");
        assert_eq!(reply.tool_calls[0].arguments, r#"{"todos": [{"title": "Wri"#);
        let reply = reply_of("llama.cpp-length-no-done.sse");
        assert_eq!(
            (reply.text.as_str(), reply.stop),
            ("The plan has three steps: first", StopReason::Length)
        );
    }

    #[test]
    fn repeated_ids_and_names_and_missing_indexes() {
        let deepseek = reply_of("deepseek-repeated-id.sse");
        assert_eq!(deepseek.tool_calls.len(), 1);
        assert_eq!(deepseek.tool_calls[0].id, "call_0_8f7c1e62-0c59-4c61-a7a6-3c1d2a0f9b54");
        assert_eq!(deepseek.tool_calls[0].arguments, r#"{"todos":[{"title":"Write the tests"}]}"#);
        assert_eq!(deepseek.usage, usage(318, 22, 256));
        let dashscope = reply_of("dashscope-repeated-id-and-name.sse");
        assert_eq!(dashscope.tool_calls.len(), 1);
        assert_eq!(dashscope.tool_calls[0].name, "todos_add");
        assert_eq!(dashscope.tool_calls[0].id, "call_5b1f0c2e9a3d4e7f8a6b2c1d");
        assert_eq!(dashscope.tool_calls[0].arguments, r#"{"todos": [{"title": "Write the tests"}]}"#);
        assert_eq!(dashscope.usage, usage(402, 25, 0));
        let gemini = reply_of("gemini-no-index.sse");
        let calls: Vec<(&str, &str)> =
            gemini.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str())).collect();
        assert_eq!(calls, [("function-call-1", "todos_add"), ("function-call-2", "todos_get_all")]);
        assert_eq!(gemini.tool_calls[0].arguments, r#"{"todos":[{"title":"Write the tests"}]}"#);
        assert_eq!(gemini.stop, StopReason::Done);
    }

    #[test]
    fn objects_for_arguments_and_null_chunks() {
        let object = reply_of("llama.cpp-arguments-object.sse");
        assert_eq!(object.tool_calls[0].arguments, r#"{"todos":[{"title":"Write the tests"}]}"#);
        let minimax = reply_of("minimax-choices-null.sse");
        assert_eq!((minimax.text.as_str(), minimax.usage), ("All three todos are done.", usage(521, 9, 0)));
        assert_eq!(reply_of("proxy-data-null.sse").text, "Still here.");
    }

    #[test]
    fn a_stream_that_ends_early_is_cut_once_text_streamed_and_retryable_before() {
        let text = b"data: {\"choices\":[{\"delta\":{\"content\":\"half a sen\"}}]}\n\n";
        let (result, streamed) = read(text, None);
        match result {
            Err(Broken { error: ModelError::Cut { detail, partial }, retryable: false }) => {
                assert_eq!((detail.as_str(), partial.text.as_str()), (ENDED_EARLY, "half a sen"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(streamed, "half a sen");
        let dropped = read(text, Some(std::io::Error::other("connection reset")));
        assert!(
            matches!(dropped.0, Err(Broken { error: ModelError::Cut { ref detail, .. }, .. }) if detail == "connection reset")
        );
        let nothing_shown = b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n";
        let (result, _) = read(nothing_shown, Some(std::io::Error::other("connection reset")));
        assert!(
            matches!(result, Err(Broken { error: ModelError::Stream { .. }, retryable: true })),
            "{result:?}"
        );
        let (result, _) = read(nothing_shown, None);
        assert!(matches!(result, Err(Broken { retryable: true, .. })), "{result:?}");
    }

    #[test]
    fn a_connection_lost_after_the_finish_reason_leaves_a_complete_reply() {
        let finished =
            b"data: {\"choices\":[{\"delta\":{\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\n";
        let (result, _) = read(finished, Some(std::io::Error::other("connection reset")));
        assert_eq!(result.unwrap().text, "done");
    }
}
