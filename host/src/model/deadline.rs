//! The waits of one attempt at a model call. A reply's first byte may take long (the
//! endpoint queues the request and reads the whole prompt first), after which a streaming
//! endpoint that is still working sends something every few seconds; so the first byte has
//! its own wait (`first_byte_timeout_secs`), every later chunk the idle wait
//! (`idle_timeout_secs`), and the whole attempt an outer bound (`timeout_secs`) that a model
//! looping forever meets however steadily it streams.

use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio::time::{Instant, timeout_at};

/// The three waits, from `[model]`.
#[derive(Debug, Clone, Copy)]
pub struct Waits {
    pub first_byte: Duration,
    pub idle: Duration,
    pub whole: Duration,
}

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lapse {
    FirstByte(Duration),
    Idle(Duration),
    Whole(Duration),
}

impl Lapse {
    pub fn describe(self) -> String {
        match self {
            Lapse::FirstByte(wait) => format!(
                "the model sent nothing within {} s (`first_byte_timeout_secs` in [model])",
                wait.as_secs()
            ),
            Lapse::Idle(wait) => format!(
                "the model went quiet for {} s in the middle of its reply (`idle_timeout_secs` in [model])",
                wait.as_secs()
            ),
            Lapse::Whole(wait) => {
                format!("the model did not finish within {} s (`timeout_secs` in [model])", wait.as_secs())
            }
        }
    }
}

/// The deadlines of one attempt, from the moment its request is sent.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    started: Instant,
    waits: Waits,
    /// Some of the reply's body has arrived: the idle wait applies from now on.
    received: bool,
}

impl Clock {
    pub fn start(waits: Waits) -> Self {
        Self { started: Instant::now(), waits, received: false }
    }

    /// When the next thing must arrive by, and which wait that is.
    pub fn next(&self) -> (Instant, Lapse) {
        let whole = (self.started + self.waits.whole, Lapse::Whole(self.waits.whole));
        let own = if self.received {
            (Instant::now() + self.waits.idle, Lapse::Idle(self.waits.idle))
        } else {
            (self.started + self.waits.first_byte, Lapse::FirstByte(self.waits.first_byte))
        };
        if own.0 < whole.0 { own } else { whole }
    }
}

/// An item of a [`timed`] stream that is not data.
#[derive(Debug)]
pub enum Timed<E> {
    Transport(E),
    Lapsed(Lapse),
}

impl<E: std::fmt::Display> std::fmt::Display for Timed<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Timed::Transport(error) => error.fmt(f),
            Timed::Lapsed(lapse) => f.write_str(&lapse.describe()),
        }
    }
}

/// `chunks` held to `clock`: each must arrive before the clock's next deadline, or the
/// stream yields the lapse and ends.
pub fn timed<S, B, E>(chunks: S, clock: Clock) -> impl Stream<Item = Result<B, Timed<E>>> + Send
where
    S: Stream<Item = Result<B, E>> + Send + 'static,
    B: Send,
    E: Send,
{
    let state: Option<(Pin<Box<S>>, Clock)> = Some((Box::pin(chunks), clock));
    futures_util::stream::unfold(state, |state| async move {
        let (mut chunks, mut clock) = state?;
        let (deadline, lapse) = clock.next();
        match timeout_at(deadline, chunks.next()).await {
            Ok(Some(item)) => {
                clock.received = true;
                Some((item.map_err(Timed::Transport), Some((chunks, clock))))
            }
            Ok(None) => None,
            Err(_) => Some((Err(Timed::Lapsed(lapse)), None)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waits(first_byte_ms: u64, idle_ms: u64, whole_ms: u64) -> Waits {
        Waits {
            first_byte: Duration::from_millis(first_byte_ms),
            idle: Duration::from_millis(idle_ms),
            whole: Duration::from_millis(whole_ms),
        }
    }

    #[test]
    fn the_first_byte_then_the_idle_wait_then_the_outer_bound_apply() {
        let clock = Clock::start(waits(10_000, 2_000, 100_000));
        assert!(matches!(clock.next().1, Lapse::FirstByte(_)));
        let received = Clock { received: true, ..clock };
        assert!(matches!(received.next().1, Lapse::Idle(_)));
        let short = Clock::start(waits(10_000, 2_000, 5_000));
        assert_eq!(short.next().1, Lapse::Whole(Duration::from_secs(5)), "the outer bound comes first");
    }

    #[tokio::test]
    async fn a_stream_that_goes_quiet_lapses_and_ends() {
        let first = futures_util::stream::iter([Ok::<_, std::io::Error>(1u8)]);
        let quiet = first.chain(futures_util::stream::pending());
        let items: Vec<_> = timed(quiet, Clock::start(waits(60_000, 20, 60_000))).collect().await;
        assert!(matches!(items[..], [Ok(1), Err(Timed::Lapsed(Lapse::Idle(_)))]), "{items:?}");
        let silent = futures_util::stream::pending::<Result<u8, std::io::Error>>();
        let items: Vec<_> = timed(silent, Clock::start(waits(20, 60_000, 60_000))).collect().await;
        assert!(matches!(items[..], [Err(Timed::Lapsed(Lapse::FirstByte(_)))]), "{items:?}");
    }
}
