//! The `turn_ended` event: said once per turn, however the turn ends, with what the turn's
//! meter read: its model calls, tokens and time.

use super::meter::TurnMeter;
use crate::agent::{TurnEnd, TurnError, TurnOutcome};
use crate::events::{Event, EventSink};

/// Keeps a turn's meter and reports its end. A turn that returns reports its end (done,
/// max_iterations, a budget, blocked, error); one dropped before it returns (Ctrl-C) reports
/// `cancelled` as it is dropped.
pub(super) struct EndReport<'a> {
    sink: &'a dyn EventSink,
    /// What the turn has spent so far; its model calls are requests sent, whether or not a
    /// reply came back.
    pub(super) meter: TurnMeter,
    reported: bool,
}

impl<'a> EndReport<'a> {
    pub(super) fn new(sink: &'a dyn EventSink) -> Self {
        Self { sink, meter: TurnMeter::default(), reported: false }
    }

    /// Reports how the turn ended; a failure is reported as an `error` event first.
    pub(super) fn finish(mut self, result: &Result<TurnOutcome, TurnError>) {
        let reason = match result {
            Ok(outcome) => outcome.end,
            Err(error) => {
                self.sink.emit(&Event::Error { message: error.to_string(), plugin: None });
                TurnEnd::Error
            }
        };
        self.report(reason);
    }

    fn report(&mut self, reason: TurnEnd) {
        self.reported = true;
        self.sink.emit(&Event::TurnEnded {
            reason,
            iterations: self.meter.model_calls(),
            tokens: self.meter.tokens(),
            ms: u64::try_from(self.meter.elapsed().as_millis()).unwrap_or(u64::MAX),
            estimated: self.meter.estimated(),
        });
    }
}

impl Drop for EndReport<'_> {
    fn drop(&mut self) {
        if !self.reported {
            self.report(TurnEnd::Cancelled);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::model::ModelError;

    #[derive(Default)]
    struct Recorded(Mutex<Vec<Event>>);

    impl EventSink for Recorded {
        fn emit(&self, event: &Event) {
            self.0.lock().unwrap().push(event.clone());
        }
    }

    impl Recorded {
        fn ends(&self) -> Vec<(TurnEnd, u32)> {
            let events = self.0.lock().unwrap();
            let ends = events.iter().filter_map(|event| match event {
                Event::TurnEnded { reason, iterations, .. } => Some((*reason, *iterations)),
                _ => None,
            });
            ends.collect()
        }
    }

    fn after_calls(sink: &Recorded, calls: u32) -> EndReport<'_> {
        let mut report = EndReport::new(sink);
        for _ in 0..calls {
            report.meter.model_call_made();
        }
        report
    }

    #[test]
    fn a_failed_turn_reports_the_calls_it_made_after_its_error() {
        let sink = Recorded::default();
        let failed = Err(TurnError::Model(ModelError::Timeout { secs: 1 }));
        after_calls(&sink, 2).finish(&failed);
        assert_eq!(sink.ends(), [(TurnEnd::Error, 2)]);
        assert!(matches!(sink.0.lock().unwrap()[0], Event::Error { .. }), "the error comes first");
    }

    #[test]
    fn a_dropped_turn_reports_cancelled_once_and_a_finished_one_only_its_end() {
        let sink = Recorded::default();
        drop(after_calls(&sink, 3));
        let done = Ok(TurnOutcome { end: TurnEnd::Done, iterations: 1, reply: String::new(), tokens: 0 });
        after_calls(&sink, 1).finish(&done);
        assert_eq!(sink.ends(), [(TurnEnd::Cancelled, 3), (TurnEnd::Done, 1)]);
    }
}
