//! The three waits of one attempt: for the reply's first byte (the endpoint may queue the
//! request and read the whole prompt first), between two chunks of a streaming reply, and
//! over the whole attempt. A slow model that keeps streaming is not cut for being slow;
//! one that goes quiet is.

use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::time::{Instant, timeout_at};

use crate::config::ModelConfig;

/// `[model] first_byte_timeout_secs`, `idle_timeout_secs` and `timeout_secs`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadlines {
    first_byte: Duration,
    idle: Duration,
    total: Duration,
}

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Late {
    FirstByte,
    Idle,
    Total,
}

/// One attempt's deadlines, from when it started.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    started: Instant,
    deadlines: Deadlines,
}

/// A chunk of the body that did not come: the body's own error, or a wait that ran out.
#[derive(Debug)]
pub(super) enum Broken<E> {
    Body(E),
    Late(Late),
}

impl Deadlines {
    pub(super) fn from_config(config: &ModelConfig) -> Self {
        Self {
            first_byte: Duration::from_secs(config.first_byte_timeout_secs),
            idle: Duration::from_secs(config.idle_timeout_secs),
            total: Duration::from_secs(config.timeout_secs),
        }
    }

    /// The clock of an attempt that starts now.
    pub(super) fn start(self) -> Clock {
        Clock { started: Instant::now(), deadlines: self }
    }

    /// How long `late`'s wait is, in seconds, and the setting that says so.
    pub(super) fn of(&self, late: Late) -> (u64, &'static str) {
        match late {
            Late::FirstByte => (self.first_byte.as_secs(), "first_byte_timeout_secs"),
            Late::Idle => (self.idle.as_secs(), "idle_timeout_secs"),
            Late::Total => (self.total.as_secs(), "timeout_secs"),
        }
    }
}

impl Clock {
    pub(super) fn end(&self) -> Instant {
        self.started + self.deadlines.total
    }

    /// When the first byte is due, and which wait that is.
    pub(super) fn first_byte(&self) -> (Instant, Late) {
        self.earlier(self.started + self.deadlines.first_byte, Late::FirstByte)
    }

    fn next_chunk(&self) -> (Instant, Late) {
        self.earlier(Instant::now() + self.deadlines.idle, Late::Idle)
    }

    fn earlier(&self, at: Instant, late: Late) -> (Instant, Late) {
        if at < self.end() { (at, late) } else { (self.end(), Late::Total) }
    }

    /// `chunks` under the deadlines: the first within the first-byte wait, each later one
    /// within the idle wait of the one before, all before the end. Once a wait runs out
    /// the stream yields [`Broken::Late`] and ends.
    pub(super) fn watch<S, E>(self, chunks: S) -> impl Stream<Item = Result<Bytes, Broken<E>>>
    where
        S: Stream<Item = Result<Bytes, E>>,
    {
        let state = (Box::pin(chunks), self, true, false);
        futures_util::stream::unfold(state, |(mut chunks, clock, first, over)| async move {
            if over {
                return None;
            }
            let (deadline, late) = if first { clock.first_byte() } else { clock.next_chunk() };
            match timeout_at(deadline, chunks.next()).await {
                Err(_) => Some((Err(Broken::Late(late)), (chunks, clock, first, true))),
                Ok(None) => None,
                Ok(Some(Ok(chunk))) => Some((Ok(chunk), (chunks, clock, false, false))),
                Ok(Some(Err(error))) => Some((Err(Broken::Body(error)), (chunks, clock, first, true))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use futures_util::stream;

    use super::*;

    fn deadlines(first_byte_ms: u64, idle_ms: u64, total_ms: u64) -> Deadlines {
        Deadlines {
            first_byte: Duration::from_millis(first_byte_ms),
            idle: Duration::from_millis(idle_ms),
            total: Duration::from_millis(total_ms),
        }
    }

    /// Chunks that arrive after the given pauses, in milliseconds.
    fn paced(pauses: &'static [u64]) -> impl Stream<Item = Result<Bytes, ()>> {
        stream::iter(pauses).then(|&pause| async move {
            tokio::time::sleep(Duration::from_millis(pause)).await;
            Ok(Bytes::from_static(b"x"))
        })
    }

    async fn outcome(clock: Clock, pauses: &'static [u64]) -> (usize, Option<Late>) {
        let items: Vec<_> = clock.watch(paced(pauses)).collect().await;
        let chunks = items.iter().filter(|item| item.is_ok()).count();
        let late = items.iter().find_map(|item| match item {
            Err(Broken::Late(late)) => Some(*late),
            _ => None,
        });
        (chunks, late)
    }

    #[tokio::test]
    async fn a_stream_that_keeps_coming_is_read_whole_however_long_it_takes_in_all() {
        // The first chunk at once, three more 600 ms apart: past the first-byte wait in all.
        let clock = deadlines(1_000, 10_000, 60_000).start();
        assert_eq!(outcome(clock, &[0, 600, 600, 600]).await, (4, None));
    }

    #[tokio::test]
    async fn a_late_first_byte_a_quiet_stream_and_a_long_one_are_each_cut() {
        assert_eq!(
            outcome(deadlines(20, 60_000, 60_000).start(), &[2_000]).await,
            (0, Some(Late::FirstByte))
        );
        assert_eq!(
            outcome(deadlines(60_000, 20, 60_000).start(), &[0, 0, 2_000]).await,
            (2, Some(Late::Idle))
        );
        let (chunks, late) = outcome(deadlines(60_000, 60_000, 300).start(), &[0, 200, 200, 200, 200]).await;
        assert_eq!(late, Some(Late::Total));
        assert!((1..5).contains(&chunks), "{chunks} chunks before the end");
    }

    #[test]
    fn the_first_byte_is_due_by_the_end_at_the_latest() {
        let clock = deadlines(5_000, 1_000, 2_000).start();
        assert_eq!(clock.first_byte(), (clock.end(), Late::Total));
        let clock = deadlines(500, 1_000, 2_000).start();
        assert_eq!(clock.first_byte().1, Late::FirstByte);
    }
}
