//! What a turn has spent, counted by the host: its model calls' tokens and its plugins'
//! (`model.complete`, reviews and judgements included), model calls, wall time, and the
//! continuations `stop` hooks asked for. The caps under `[agent]` are the deployment's: no
//! plugin can raise them, and a turn that reaches one ends with it as its reason. A call whose
//! endpoint reported no usage is charged the host's estimate ([`Charge`]): counted as
//! nothing, it would never reach a cap.

use std::time::{Duration, Instant};

use crate::config::AgentConfig;
use crate::events::{TokenUsage, TurnEnd};
use crate::plugins::MeterReading;
use crate::state::{EstimatedUsage, PluginModelUsage, Session};

/// The meter as a plugin call outside a turn reads it: nothing spent in a turn, the caps as
/// set, and what `session` has spent.
pub fn outside_a_turn(agent: &AgentConfig, session: &Session) -> MeterReading {
    MeterReading { turn_ms: 0, ..TurnMeter::default().reading(agent, session) }
}

/// Every token `session` has spent: its model calls' as their endpoints reported them, or as
/// estimated where they reported none (both kept with the session, so a resumed one goes on
/// counting), and its plugins' model calls'.
pub(in crate::agent) fn session_tokens(session: &Session) -> u64 {
    let usage = session.usage();
    let estimated = EstimatedUsage::of(session.bag()).tokens();
    let plugins = PluginModelUsage::total(session.bag()).tokens();
    usage.input_tokens.saturating_add(usage.output_tokens).saturating_add(estimated).saturating_add(plugins)
}

/// What one model call is charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charge {
    pub usage: TokenUsage,
    /// The endpoint reported no usage: `usage` is the host's estimate.
    pub estimated: bool,
}

impl Charge {
    /// What the endpoint `reported`, else `estimate()`.
    pub fn of(reported: Option<TokenUsage>, estimate: impl FnOnce() -> TokenUsage) -> Self {
        match reported {
            Some(usage) => Self { usage, estimated: false },
            None => Self { usage: estimate(), estimated: true },
        }
    }

    pub fn tokens(&self) -> u64 {
        self.usage.input_tokens.saturating_add(self.usage.output_tokens)
    }
}

/// One turn's spending so far.
#[derive(Debug)]
pub struct TurnMeter {
    started: Instant,
    /// Input and output tokens of the turn's own model calls.
    model_tokens: u64,
    /// Of the plugins' model calls since the turn began, as their service counted them.
    plugin_tokens: u64,
    /// Of the child agents' turns it ran (contract 0.2.8).
    children_tokens: u64,
    model_calls: u32,
    continuations: u32,
    /// Some of `model_tokens` are the host's estimate, not an endpoint's report.
    estimated: bool,
}

impl Default for TurnMeter {
    fn default() -> Self {
        Self {
            started: Instant::now(),
            model_tokens: 0,
            plugin_tokens: 0,
            children_tokens: 0,
            model_calls: 0,
            continuations: 0,
            estimated: false,
        }
    }
}

impl TurnMeter {
    /// A model call was sent.
    pub fn model_call_made(&mut self) {
        self.model_calls += 1;
    }

    /// A reply came back, its call charged `charge`.
    pub fn replied(&mut self, charge: Charge) {
        self.model_tokens = self.model_tokens.saturating_add(charge.tokens());
        self.estimated |= charge.estimated;
    }

    /// Whether the turn's figure holds an estimate: some endpoint reported no usage.
    pub fn estimated(&self) -> bool {
        self.estimated
    }

    /// The plugins' model calls have spent `tokens` since the turn began.
    pub fn plugins_spent(&mut self, tokens: u64) {
        self.plugin_tokens = tokens;
    }

    /// Child agents' turns it ran spent `tokens` more.
    pub fn children_spent(&mut self, tokens: u64) {
        self.children_tokens = self.children_tokens.saturating_add(tokens);
    }

    /// A `stop` hook sent the model on.
    pub fn continued(&mut self) {
        self.continuations += 1;
    }

    pub fn model_calls(&self) -> u32 {
        self.model_calls
    }

    /// Every token the turn spent, its plugins' and its children's too.
    pub fn tokens(&self) -> u64 {
        self.model_tokens.saturating_add(self.plugin_tokens).saturating_add(self.children_tokens)
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The cap of `agent` the turn has reached, as the reason it ends with; none while it is
    /// within them all.
    pub fn exhausted(&self, agent: &AgentConfig) -> Option<TurnEnd> {
        if agent.max_turn_tokens.is_some_and(|cap| self.tokens() >= cap) {
            return Some(TurnEnd::TokenBudget);
        }
        if agent.max_turn_secs.is_some_and(|cap| self.elapsed() >= Duration::from_secs(cap)) {
            return Some(TurnEnd::TimeBudget);
        }
        None
    }

    /// The meter as plugins read it (the `meter` import), with `agent`'s caps and the totals
    /// of `session`, which the turn's replies and plugin model calls are already added to.
    pub fn reading(&self, agent: &AgentConfig, session: &Session) -> MeterReading {
        MeterReading {
            turn_tokens: self.tokens(),
            turn_model_calls: self.model_calls,
            turn_ms: u64::try_from(self.elapsed().as_millis()).unwrap_or(u64::MAX),
            turn_continuations: self.continuations,
            max_iterations: agent.max_iterations,
            max_turn_tokens: agent.max_turn_tokens,
            max_turn_secs: agent.max_turn_secs,
            max_continuations: agent.max_continuations,
            session_tokens: session_tokens(session),
            session_model_calls: session.model_calls(),
        }
    }

    /// Whether a `stop` hook may send the model on once more.
    pub fn may_continue(&self, agent: &AgentConfig) -> bool {
        agent.max_continuations.is_none_or(|cap| self.continuations < cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(tokens: Option<u64>, secs: Option<u64>, continuations: Option<u32>) -> AgentConfig {
        AgentConfig {
            max_turn_tokens: tokens,
            max_turn_secs: secs,
            max_continuations: continuations,
            ..AgentConfig::default()
        }
    }

    fn usage(input: u64, output: u64) -> TokenUsage {
        TokenUsage { input_tokens: input, output_tokens: output, ..TokenUsage::default() }
    }

    fn reported(input: u64, output: u64) -> Charge {
        Charge::of(Some(usage(input, output)), || unreachable!("a reported call is not estimated"))
    }

    #[test]
    fn the_token_cap_counts_the_turns_calls_and_its_plugins_calls_together() {
        let mut meter = TurnMeter::default();
        let capped = agent(Some(1_000), None, None);
        meter.replied(reported(600, 100));
        assert_eq!(meter.exhausted(&capped), None);
        meter.plugins_spent(299);
        assert_eq!(meter.tokens(), 999);
        assert_eq!(meter.exhausted(&capped), None, "one token short of the cap");
        meter.plugins_spent(300);
        assert_eq!(meter.exhausted(&capped), Some(TurnEnd::TokenBudget));
        assert!(!meter.estimated(), "every figure so far was reported");
    }

    #[test]
    fn a_reply_without_usage_is_charged_its_estimate_and_marks_the_turn_estimated() {
        let mut meter = TurnMeter::default();
        let capped = agent(Some(1_000), None, None);
        meter.replied(Charge::of(None, || usage(700, 400)));
        assert_eq!(meter.tokens(), 1_100);
        assert!(meter.estimated());
        assert_eq!(meter.exhausted(&capped), Some(TurnEnd::TokenBudget));
        let mut asked = false;
        let charge = Charge::of(Some(usage(5, 5)), || {
            asked = true;
            usage(1, 1)
        });
        assert_eq!(
            (charge.tokens(), charge.estimated, asked),
            (10, false, false),
            "a report is not estimated"
        );
    }

    #[test]
    fn without_caps_nothing_is_exhausted() {
        let mut meter = TurnMeter::default();
        meter.replied(reported(u64::MAX, u64::MAX));
        assert_eq!(meter.tokens(), u64::MAX);
        assert_eq!(meter.exhausted(&AgentConfig::default()), None);
        assert!(meter.may_continue(&AgentConfig::default()));
    }

    #[test]
    fn the_time_cap_ends_a_turn_that_ran_past_it() {
        let meter = TurnMeter { started: Instant::now() - Duration::from_secs(3), ..TurnMeter::default() };
        assert_eq!(meter.exhausted(&agent(None, Some(4), None)), None);
        assert_eq!(meter.exhausted(&agent(None, Some(3), None)), Some(TurnEnd::TimeBudget));
    }

    #[test]
    fn continuations_stop_at_their_cap() {
        let mut meter = TurnMeter::default();
        let capped = agent(None, None, Some(2));
        meter.continued();
        assert!(meter.may_continue(&capped));
        meter.continued();
        assert!(!meter.may_continue(&capped));
    }
}
