//! The waits of one attempt at a model call. A reply's first byte may take long (the
//! endpoint queues the request and reads the whole prompt first), after which a streaming
//! endpoint that is still working sends something every few seconds; so the first byte has
//! its own wait (`first_byte_timeout_secs`), every later chunk the idle wait
//! (`idle_timeout_secs`), and the whole attempt an outer bound (`timeout_secs`) that a model
//! looping forever meets however steadily it streams. Both model clients keep their
//! attempts to these waits and say the same thing when one runs out.

use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio::time::{Instant, timeout_at};

use super::ModelError;
use crate::config::ModelConfig;

/// The three waits, from `[model]`.
#[derive(Debug, Clone, Copy)]
pub struct Waits {
    pub first_byte: Duration,
    pub idle: Duration,
    pub whole: Duration,
}

impl Waits {
    /// `first_byte_timeout_secs`, `idle_timeout_secs` and `timeout_secs`.
    pub fn from_config(config: &ModelConfig) -> Self {
        Self {
            first_byte: Duration::from_secs(config.first_byte_timeout_secs),
            idle: Duration::from_secs(config.idle_timeout_secs),
            whole: Duration::from_secs(config.timeout_secs),
        }
    }
}

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lapse {
    FirstByte(Duration),
    Idle(Duration),
    Whole(Duration),
}

impl Lapse {
    /// The `[model]` setting that gave the wait.
    pub fn setting(self) -> &'static str {
        match self {
            Lapse::FirstByte(_) => "first_byte_timeout_secs",
            Lapse::Idle(_) => "idle_timeout_secs",
            Lapse::Whole(_) => "timeout_secs",
        }
    }

    /// How long the wait was.
    pub fn wait(self) -> Duration {
        match self {
            Lapse::FirstByte(wait) | Lapse::Idle(wait) | Lapse::Whole(wait) => wait,
        }
    }

    pub fn describe(self) -> String {
        let (secs, setting) = (self.wait().as_secs(), self.setting());
        match self {
            Lapse::FirstByte(_) => format!("the model sent nothing within {secs} s (`{setting}` in [model])"),
            Lapse::Idle(_) => format!(
                "the model went quiet for {secs} s in the middle of its reply (`{setting}` in [model])"
            ),
            Lapse::Whole(_) => format!("the model did not finish within {secs} s (`{setting}` in [model])"),
        }
    }

    /// The error for the attempt this ended: a timeout when the outer bound ran out, else a
    /// reply that broke off, naming the wait's setting.
    pub fn error(self) -> ModelError {
        match self {
            Lapse::Whole(wait) => ModelError::Timeout { secs: wait.as_secs() },
            other => ModelError::Stream { detail: other.describe() },
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

    /// When the attempt must be over, whatever arrives: the outer bound.
    pub fn end(&self) -> (Instant, Lapse) {
        (self.started + self.waits.whole, Lapse::Whole(self.waits.whole))
    }

    /// When the next thing must arrive by, and which wait that is.
    pub fn next(&self) -> (Instant, Lapse) {
        let whole = self.end();
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

    /// Chunks that arrive after the given pauses, in milliseconds.
    fn paced(pauses: &'static [u64]) -> impl Stream<Item = Result<u8, std::io::Error>> + Send + 'static {
        futures_util::stream::iter(pauses).then(|&pause| async move {
            tokio::time::sleep(Duration::from_millis(pause)).await;
            Ok(1)
        })
    }

    /// How many chunks came through, and the wait that ran out, if one did.
    async fn outcome(waits: Waits, pauses: &'static [u64]) -> (usize, Option<Lapse>) {
        let items: Vec<_> = timed(paced(pauses), Clock::start(waits)).collect().await;
        let chunks = items.iter().filter(|item| item.is_ok()).count();
        let lapse = items.iter().find_map(|item| match item {
            Err(Timed::Lapsed(lapse)) => Some(*lapse),
            _ => None,
        });
        (chunks, lapse)
    }

    #[tokio::test]
    async fn a_stream_that_keeps_coming_is_read_whole_past_the_first_byte_wait() {
        // The first chunk at once, three more 600 ms apart: past the first-byte wait in all.
        assert_eq!(outcome(waits(1_000, 10_000, 60_000), &[0, 600, 600, 600]).await, (4, None));
    }

    #[tokio::test]
    async fn a_stream_that_keeps_coming_is_cut_at_the_outer_bound() {
        let (chunks, lapse) = outcome(waits(60_000, 60_000, 300), &[0, 200, 200, 200, 200]).await;
        assert_eq!(lapse, Some(Lapse::Whole(Duration::from_millis(300))));
        assert!((1..5).contains(&chunks), "{chunks} chunks before the end");
    }

    #[test]
    fn a_lapse_names_its_setting_and_only_the_outer_bound_is_a_timeout() {
        let first_byte = Lapse::FirstByte(Duration::from_secs(120)).error().to_string();
        assert!(first_byte.contains("nothing within 120 s (`first_byte_timeout_secs`"), "{first_byte}");
        let idle = Lapse::Idle(Duration::from_secs(60)).error().to_string();
        assert!(idle.contains("quiet for 60 s") && idle.contains("`idle_timeout_secs`"), "{idle}");
        let whole = Lapse::Whole(Duration::from_secs(600)).error();
        assert!(matches!(whole, ModelError::Timeout { secs: 600 }), "{whole:?}");
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
