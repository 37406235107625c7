//! The one reader of server-sent events, for both model clients: the framing by
//! `eventsource-stream` (LF, CR or CRLF line endings, comments and keep-alives, lines cut
//! across chunks), a cap on one event's size enforced as the bytes arrive, and the data of
//! each event handed on. Generic over the byte stream, so tests and the fuzz targets can feed
//! it chunks cut anywhere, without an HTTP server.

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};

/// What a stream that ends early says: the end of the bytes before the reply said it was
/// complete.
pub const ENDED_EARLY: &str = "the stream ended before the reply was complete";

/// Why the events stopped before the bytes did.
#[derive(Debug)]
pub(super) enum SseError<E> {
    /// The byte stream failed: the connection, a timeout, the body's cap.
    Transport(E),
    /// What arrived is not an event stream, or one event outgrew its cap: the detail says
    /// which. Another attempt would read the same.
    Unreadable(String),
}

/// The data of each event of `bytes`, in order: all its `data:` lines, joined by line
/// breaks. Events without data (comments, keep-alives, blank ones) are passed over. One
/// event longer than `max_event_bytes` is an error as soon as it grows past it: the framing
/// buffers an unfinished line whole, however long it grows, so it is measured before.
pub(super) fn data_events<S, B, E>(
    bytes: S,
    max_event_bytes: usize,
) -> impl Stream<Item = Result<String, SseError<E>>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    let mut sizes = EventSizes::default();
    let capped = bytes.map(move |chunk| match chunk {
        Ok(chunk) if !sizes.fits(chunk.as_ref(), max_event_bytes) => Err(Capped::EventTooLong),
        Ok(chunk) => Ok(chunk),
        Err(error) => Err(Capped::Transport(error)),
    });
    capped.eventsource().filter_map(move |event| {
        std::future::ready(match event {
            Ok(event) if event.data.trim().is_empty() => None,
            Ok(event) => Some(Ok(event.data)),
            Err(EventStreamError::Transport(Capped::Transport(error))) => {
                Some(Err(SseError::Transport(error)))
            }
            Err(EventStreamError::Transport(Capped::EventTooLong)) => {
                Some(Err(SseError::Unreadable(format!(
                    "one event of the stream is longer than {} KiB, the cap `sse_line_kb` in [model]",
                    max_event_bytes / 1024
                ))))
            }
            Err(other) => Some(Err(SseError::Unreadable(other.to_string()))),
        })
    })
}

/// An error of the byte stream, or the cap on one event's size.
enum Capped<E> {
    Transport(E),
    EventTooLong,
}

/// Only for the framing's own error type, which wants one: the reader never shows it.
impl<E> std::fmt::Display for Capped<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Capped::Transport(_) => "the stream broke",
            Capped::EventTooLong => "an event is too long",
        })
    }
}

/// The size of the event being received: bytes since the blank line that ended the last.
#[derive(Default)]
struct EventSizes {
    event: usize,
    /// Bytes of the current line so far; 0 right after a line break.
    line: usize,
    /// The last byte was a `\r`, so a `\n` now ends the same line.
    after_cr: bool,
}

impl EventSizes {
    /// Takes in `chunk`; false once the current event has grown past `max`.
    fn fits(&mut self, chunk: &[u8], max: usize) -> bool {
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
    use futures_util::stream;

    use super::*;

    /// The data of `chunks`' events, or the error that ended them.
    async fn read(
        chunks: Vec<Result<Vec<u8>, String>>,
        max: usize,
    ) -> (Vec<String>, Option<SseError<String>>) {
        let all: Vec<_> = data_events(stream::iter(chunks), max).collect().await;
        let mut data = Vec::new();
        for event in all {
            match event {
                Ok(event) => data.push(event),
                Err(error) => return (data, Some(error)),
            }
        }
        (data, None)
    }

    fn whole(text: &str) -> Vec<Result<Vec<u8>, String>> {
        vec![Ok(text.as_bytes().to_vec())]
    }

    #[tokio::test]
    async fn events_are_framed_alike_whatever_their_line_endings_and_cuts() {
        let body = ": keep-alive\n\nevent: a\ndata: one\ndata: two\n\ndata:three\n\n\n\ndata: \n\n";
        let expected = ["one\ntwo", "three"];
        for ending in ["\n", "\r\n", "\r"] {
            let body = body.replace('\n', ending);
            assert_eq!(read(whole(&body), 1024).await.0, expected, "{ending:?}");
            for size in [1, 2, 5] {
                let chunks = body.as_bytes().chunks(size).map(|c| Ok(c.to_vec())).collect();
                let (data, error) = read(chunks, 1024).await;
                assert_eq!((data, error.is_none()), (expected.map(str::to_owned).to_vec(), true));
            }
        }
    }

    #[tokio::test]
    async fn a_transport_error_ends_the_events_after_those_complete_before_it() {
        let chunks = vec![Ok(b"data: one\n\ndata: tw".to_vec()), Err("connection reset".to_owned())];
        let (data, error) = read(chunks, 1024).await;
        assert_eq!(data, ["one"]);
        assert!(matches!(error, Some(SseError::Transport(error)) if error == "connection reset"));
    }

    #[tokio::test]
    async fn an_endless_line_is_refused_as_it_arrives() {
        let endless = stream::iter([Ok::<_, String>(b"data: \"".to_vec())])
            .chain(stream::repeat_with(|| Ok(vec![b'x'; 4096])));
        let mut events = std::pin::pin!(data_events(endless, 64 * 1024));
        match events.next().await {
            Some(Err(SseError::Unreadable(detail))) => {
                assert!(detail.contains("longer than 64 KiB, the cap `sse_line_kb`"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn invalid_utf8_is_unreadable_not_a_panic() {
        let (_, error) = read(vec![Ok(b"data: \xff\xfe\n\n".to_vec())], 1024).await;
        assert!(matches!(error, Some(SseError::Unreadable(_))), "{error:?}");
    }

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
