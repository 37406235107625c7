//! How a turn the model would end ends: the `stop` hooks and the judges' `turn-end`
//! verdicts (contract 0.2.7) folded into one answer. The host owns the loop: a continuation
//! is granted only while the turn's caps allow one and no input from the operator waits; a
//! judge's stop wins over every continuation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::agent::report::heard;
use crate::events::{Event, EventSink, TurnEnd};
use crate::plugins::{CallContext, Exports, JudgedStop, PluginSet, StopMemo, StopOutcome, TurnVerdict};
use crate::state::StateBag;

/// Set by a front end when the operator's input arrives for a session whose turn is running
/// (a prompt, a command): the turn grants no further continuation, and ends at its next one.
#[derive(Debug, Clone, Default)]
pub struct InputWaiting(Arc<AtomicBool>);

impl InputWaiting {
    /// The operator's input is waiting.
    pub fn mark(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether input was waiting, forgetting it: a turn starts with what was waiting.
    pub(super) fn take(&self) -> bool {
        self.0.swap(false, Ordering::SeqCst)
    }

    fn is_marked(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What the plugins decided of a step that ended without tool calls.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Ending {
    /// The turn ends as the model ended it.
    AsTheModelDid,
    /// The model goes on with this message.
    Continue(String),
    /// A judge ended it with its own reason.
    Stopped(TurnEnd),
}

/// Where the judges are asked: the session and the turn's call context.
pub(super) struct Judging<'a> {
    pub plugins: &'a PluginSet,
    pub ctx: &'a CallContext,
    pub bag: &'a StateBag,
    /// The session's kept `stop` outcomes.
    pub stops: &'a StopMemo,
    pub sink: &'a dyn EventSink,
    pub input: &'a InputWaiting,
}

impl Judging<'_> {
    /// The `stop` hooks, then every judge's `turn-end`, in config order. `may_continue` is
    /// whether the turn's caps allow another continuation: when they do not, nobody is asked
    /// (a judgement may cost a model call).
    pub(super) async fn ending(&self, reply: &str, may_continue: bool) -> Ending {
        if !may_continue {
            return Ending::AsTheModelDid;
        }
        let mut continuation = self.stop_hooks(reply).await;
        for plugin in self.plugins.plugins().iter().filter(|p| p.implements(Exports::TURN_END)) {
            let Some(verdict) = heard(self.sink, plugin, plugin.turn_end(self.ctx, self.bag, reply).await)
            else {
                continue;
            };
            match verdict {
                TurnVerdict::End => {}
                TurnVerdict::Continue(message) => {
                    continuation.get_or_insert((plugin.name().to_owned(), message));
                }
                TurnVerdict::Stop { reason, message } => {
                    let reason = turn_end(reason);
                    self.sink.emit(&Event::TurnStopped { plugin: plugin.name().to_owned(), reason, message });
                    return Ending::Stopped(reason);
                }
            }
        }
        let Some((plugin, message)) = continuation else { return Ending::AsTheModelDid };
        if self.input.is_marked() {
            self.sink.emit(&Event::ContinuationPreempted { plugin });
            return Ending::AsTheModelDid;
        }
        self.sink.emit(&Event::Continued { plugin, message: message.clone() });
        Ending::Continue(message)
    }

    /// The first `stop` hook that continues, with its plugin's name.
    async fn stop_hooks(&self, reply: &str) -> Option<(String, String)> {
        for plugin in self.plugins.plugins().iter().filter(|p| p.implements(Exports::STOP)) {
            let outcome = heard(self.sink, plugin, plugin.stop(self.ctx, self.bag, reply, self.stops).await);
            if let Some(StopOutcome::Continue(message)) = outcome {
                return Some((plugin.name().to_owned(), message));
            }
        }
        None
    }
}

fn turn_end(reason: JudgedStop) -> TurnEnd {
    match reason {
        JudgedStop::NeedInput => TurnEnd::NeedInput,
        JudgedStop::Blocked => TurnEnd::Blocked,
        JudgedStop::TokenBudget => TurnEnd::TokenBudget,
        JudgedStop::TimeBudget => TurnEnd::TimeBudget,
    }
}
