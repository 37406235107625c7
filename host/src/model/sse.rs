//! Reads a streamed Chat Completions reply (server-sent events) into a [`ModelReply`]: the
//! SSE framing by `eventsource-stream`, each `data:` payload through the [`ReplyAssembler`].
//! Generic over the byte stream, so tests and the fuzz targets can feed it chunks cut
//! anywhere, without an HTTP server.

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};

use super::{ModelError, ModelReply, ReplyAssembler};

/// Reads the whole stream. `transport` turns an error of the byte stream itself (a dropped
/// connection, a timeout) into a [`ModelError`]; text deltas go to `on_text` as they come.
/// A stream that ends without `[DONE]` or a `finish_reason` is an error: the reply was cut.
pub async fn read_event_stream<S, B, E>(
    bytes: S,
    transport: impl Fn(E) -> ModelError,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<ModelReply, ModelError>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    let mut events = std::pin::pin!(bytes.eventsource());
    let mut assembler = ReplyAssembler::default();
    let mut done = false;
    while let Some(event) = events.next().await {
        let event = event.map_err(|error| match error {
            EventStreamError::Transport(error) => transport(error),
            other => ModelError::Stream { detail: other.to_string() },
        })?;
        if event.data.trim() == "[DONE]" {
            done = true;
            break;
        }
        if event.data.trim().is_empty() {
            continue;
        }
        if let Some(text) = assembler.push_chunk(&event.data)? {
            on_text(&text);
        }
    }
    if !done && !assembler.finished() {
        return Err(ModelError::Stream { detail: "the stream ended before the reply was complete".into() });
    }
    Ok(assembler.finish())
}
