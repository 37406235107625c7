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
/// One event (all its lines) longer than `max_event_bytes` is an error too, found as the
/// bytes arrive: the SSE reader buffers an unfinished line whole, however long it grows.
pub async fn read_event_stream<S, B, E>(
    bytes: S,
    max_event_bytes: usize,
    transport: impl Fn(E) -> ModelError,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<ModelReply, ModelError>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    let mut sizes = EventSizes::default();
    let bytes = bytes.map(move |chunk| match chunk {
        Ok(chunk) if !sizes.fits(chunk.as_ref(), max_event_bytes) => Err(Capped::EventTooLong),
        Ok(chunk) => Ok(chunk),
        Err(error) => Err(Capped::Transport(error)),
    });
    let mut events = std::pin::pin!(bytes.eventsource());
    let mut assembler = ReplyAssembler::default();
    let mut done = false;
    while let Some(event) = events.next().await {
        let event = event.map_err(|error| match error {
            EventStreamError::Transport(Capped::Transport(error)) => transport(error),
            EventStreamError::Transport(Capped::EventTooLong) => ModelError::Stream {
                detail: format!(
                    "one event of the stream is longer than {} KiB, the cap `sse_line_kb` in \
                     [runtime.limits]",
                    max_event_bytes / 1024
                ),
            },
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

/// An error of the byte stream, or the cap on one event's size.
enum Capped<E> {
    Transport(E),
    EventTooLong,
}

impl<E: std::fmt::Display> std::fmt::Display for Capped<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Capped::Transport(error) => error.fmt(f),
            Capped::EventTooLong => f.write_str("an event is too long"),
        }
    }
}

/// The size of the event being received: bytes since the blank line that ended the last.
#[derive(Default)]
pub(super) struct EventSizes {
    event: usize,
    /// Bytes of the current line so far; 0 right after a line break.
    line: usize,
    /// The last byte was a `\r`, so a `\n` now ends the same line.
    after_cr: bool,
}

impl EventSizes {
    /// Takes in `chunk`; false once the current event has grown past `max`.
    pub(super) fn fits(&mut self, chunk: &[u8], max: usize) -> bool {
        for &byte in chunk {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\r' | b'\n' => {
                    if self.line == 0 {
                        self.event = 0;
                    }
                    self.line = 0;
                    self.after_cr = byte == b'\r';
                }
                _ => {
                    self.line += 1;
                    self.event += 1;
                    self.after_cr = false;
                    if self.event > max {
                        return false;
                    }
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_measured_across_chunks_and_line_endings() {
        let mut sizes = EventSizes::default();
        assert!(sizes.fits(b"data: 12", 10));
        assert!(sizes.fits(b"3\r\ndata", 16), "one event of two lines, 13 bytes so far");
        assert!(!sizes.fits(b": 45", 16), "the same event grew past 16");
        let mut sizes = EventSizes::default();
        assert!(sizes.fits(b"data: 1234\r\n\r\ndata: 1234\n\n", 10), "two events of 10 bytes");
    }
}
