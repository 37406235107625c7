//! One call's deadline (`[plugin.limits] timeout_ms`), set when the call begins: the epoch
//! ticks that stop guest code, the timeout that stops a call waiting in the host, and the
//! time a process or a model request may still take are all derived from it.

use std::time::{Duration, Instant};

use super::engine::TICK;

/// Time kept back from the deadline for the plugin to turn a process's output or a model's
/// reply into its result: a tenth of the deadline, at least this much, so a loaded machine
/// does not turn a wait cut short into a call lost to its deadline.
const MIN_MARGIN_MS: u64 = 50;

/// When a call must be over, and how long it was given.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    at: Instant,
    ms: u64,
}

impl Deadline {
    /// A call given `ms` milliseconds, starting now.
    pub fn starting_now(ms: u64) -> Self {
        Self { at: Instant::now() + Duration::from_millis(ms), ms }
    }

    /// The milliseconds the call was given (its `timeout_ms`).
    pub fn ms(&self) -> u64 {
        self.ms
    }

    /// When the call must be over, for the timeout that bounds its host waits.
    pub fn at(&self) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.at)
    }

    /// The epoch ticks guest code may run for before it is interrupted.
    pub fn ticks(&self) -> u64 {
        let tick = TICK.as_millis() as u64;
        self.ms.div_ceil(tick) + 1
    }

    /// How long a wait started now (a process, a model request) may take, the margin kept
    /// back; at least a millisecond.
    pub fn time_left(&self) -> Duration {
        let margin = Duration::from_millis((self.ms / 10).max(MIN_MARGIN_MS));
        let left = self.at.saturating_duration_since(Instant::now()).saturating_sub(margin);
        left.max(Duration::from_millis(1))
    }
}
