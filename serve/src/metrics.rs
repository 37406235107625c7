//! `GET /metrics`: what the server's turns did, in the Prometheus text format, counted from
//! the events the turns send (so every front end's figures mean the same): turns (and child
//! agents' turns) by how they ended, model calls and their tokens, tool calls by decision,
//! plugin failures by plugin, and how long model calls took and how much of a turn was the
//! host's own work; and the sessions this host took over from another whose lease had run
//! out. A child agent's model and tool calls are the server's too: they come on its parent's
//! stream, wrapped, and are counted as the parent's are.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use agent_host::events::{CallDecision, Event, EventSink};
use agent_host::unpoisoned::LockUnpoisoned as _;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndLabel {
    end: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DirectionLabel {
    direction: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabel {
    decision: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PluginLabel {
    plugin: String,
}

/// The server's figures.
pub struct Metrics {
    registry: Registry,
    turns: Family<EndLabel, Counter>,
    child_turns: Family<EndLabel, Counter>,
    model_calls: Counter,
    tokens: Family<DirectionLabel, Counter>,
    tool_calls: Family<DecisionLabel, Counter>,
    approvals_asked: Counter,
    plugin_errors: Family<PluginLabel, Counter>,
    model_call_seconds: Histogram,
    host_overhead_seconds: Histogram,
    lease_takeovers: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("agent_host");
        let turns = Family::<EndLabel, Counter>::default();
        registry.register("turns", "Turns, by how they ended", turns.clone());
        let child_turns = Family::<EndLabel, Counter>::default();
        registry.register("child_turns", "Child agents' turns, by how they ended", child_turns.clone());
        let model_calls = Counter::default();
        registry.register("model_calls", "Model calls that returned a reply", model_calls.clone());
        let tokens = Family::<DirectionLabel, Counter>::default();
        registry.register("tokens", "Tokens the endpoint counted, input and output", tokens.clone());
        let tool_calls = Family::<DecisionLabel, Counter>::default();
        registry.register("tool_calls", "Tool calls, allowed to run or denied", tool_calls.clone());
        let approvals_asked = Counter::default();
        registry.register(
            "approvals_asked",
            "Tool calls put to a person to approve",
            approvals_asked.clone(),
        );
        let plugin_errors = Family::<PluginLabel, Counter>::default();
        registry.register("plugin_errors", "Plugin calls that failed, by plugin", plugin_errors.clone());
        // 10 ms to about 80 s.
        let model_call_seconds = Histogram::new(exponential_buckets(0.01, 2.0, 14));
        registry.register("model_call_seconds", "How long model calls took", model_call_seconds.clone());
        // 0.1 ms to about 0.8 s.
        let host_overhead_seconds = Histogram::new(exponential_buckets(0.0001, 2.0, 14));
        registry.register(
            "host_overhead_seconds",
            "Of each turn, the time not spent waiting for the model",
            host_overhead_seconds.clone(),
        );
        let lease_takeovers = Counter::default();
        registry.register(
            "lease_takeovers",
            "Sessions this host took over from a holder whose lease had run out or who had ended",
            lease_takeovers.clone(),
        );
        Self {
            registry,
            lease_takeovers,
            turns,
            child_turns,
            model_calls,
            tokens,
            tool_calls,
            approvals_asked,
            plugin_errors,
            model_call_seconds,
            host_overhead_seconds,
        }
    }
}

impl Metrics {
    /// The figures in the Prometheus text format; `takeovers` is how many leases this
    /// host has taken over so far (the store's layer counts them).
    pub fn text(&self, takeovers: u64) -> String {
        self.lease_takeovers.inc_by(takeovers.saturating_sub(self.lease_takeovers.get()));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry).expect("writing to a String");
        text
    }
}

/// The sink a turn sends its events through: each goes on to `inner` and is counted.
pub struct Metered<'a> {
    pub inner: &'a dyn EventSink,
    pub metrics: &'a Metrics,
    clock: Mutex<TurnClock>,
}

/// When the turn started, its model calls in flight (its own and its children's), and how
/// long at least one was.
struct TurnClock {
    started: Instant,
    /// When each session's model call in flight was sent: the turn's own under `""`, a child
    /// agent's under its session id (children run at once, each with a call of its own).
    in_flight: HashMap<String, Instant>,
    /// Since when some model call has been in flight, while one is.
    waiting_since: Option<Instant>,
    waiting: Duration,
}

impl<'a> Metered<'a> {
    pub fn new(inner: &'a dyn EventSink, metrics: &'a Metrics) -> Self {
        let clock = TurnClock {
            started: Instant::now(),
            in_flight: HashMap::new(),
            waiting_since: None,
            waiting: Duration::ZERO,
        };
        Self { inner, metrics, clock: Mutex::new(clock) }
    }

    /// Counts `event`, sent by the turn's own session (`from` empty) or by child agent `from`.
    fn count(&self, event: &Event, from: &str) {
        let metrics = self.metrics;
        match event {
            Event::Subagent { session_id, event, .. } => self.count(event, session_id),
            Event::ModelRequest { .. } => {
                let mut clock = self.clock.lock_unpoisoned();
                let now = Instant::now();
                clock.waiting_since.get_or_insert(now);
                clock.in_flight.insert(from.to_owned(), now);
            }
            Event::AssistantMessage { usage, .. } => {
                let mut clock = self.clock.lock_unpoisoned();
                if let Some(sent) = clock.in_flight.remove(from) {
                    metrics.model_call_seconds.observe(sent.elapsed().as_secs_f64());
                    if clock.in_flight.is_empty()
                        && let Some(since) = clock.waiting_since.take()
                    {
                        clock.waiting += since.elapsed();
                    }
                }
                metrics.model_calls.inc();
                if let Some(usage) = usage {
                    metrics
                        .tokens
                        .get_or_create(&DirectionLabel { direction: "input" })
                        .inc_by(usage.input_tokens);
                    metrics
                        .tokens
                        .get_or_create(&DirectionLabel { direction: "output" })
                        .inc_by(usage.output_tokens);
                }
            }
            // A call is announced once it may run, or refused; a refusal is counted as the
            // decision it is.
            Event::ToolCall { refused: false, .. } => {
                metrics.tool_calls.get_or_create(&DecisionLabel { decision: "allowed" }).inc();
            }
            Event::ToolDecision { decision: CallDecision::Deny, .. } => {
                metrics.tool_calls.get_or_create(&DecisionLabel { decision: "denied" }).inc();
            }
            Event::ApprovalRequested { .. } => {
                metrics.approvals_asked.inc();
            }
            Event::Error { plugin: Some(plugin), .. } => {
                metrics.plugin_errors.get_or_create(&PluginLabel { plugin: plugin.clone() }).inc();
            }
            Event::TurnEnded { reason, .. } => {
                let end = serde_json::to_value(reason).ok().and_then(|v| v.as_str().map(str::to_owned));
                let label = EndLabel { end: end.unwrap_or_default() };
                if !from.is_empty() {
                    metrics.child_turns.get_or_create(&label).inc();
                    return;
                }
                metrics.turns.get_or_create(&label).inc();
                let clock = self.clock.lock_unpoisoned();
                let overhead = clock.started.elapsed().saturating_sub(clock.waiting);
                metrics.host_overhead_seconds.observe(overhead.as_secs_f64());
            }
            _ => {}
        }
    }
}

impl EventSink for Metered<'_> {
    fn emit(&self, event: &Event) {
        self.count(event, "");
        self.inner.emit(event);
    }
}
