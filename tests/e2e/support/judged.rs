//! What a turn's events say its judges and its policy decided, as plain values to compare.

use agent_host::Event;
use agent_host::events::{CallDecision, TurnEnd};

/// Each call's decision and who made it, in order.
pub fn decisions(events: &[Event]) -> Vec<(CallDecision, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolDecision { decision, decided_by, .. } => Some((*decision, decided_by.clone())),
            _ => None,
        })
        .collect()
}

/// The kinds of [`decisions`], in order.
pub fn decision_kinds(events: &[Event]) -> Vec<CallDecision> {
    decisions(events).into_iter().map(|(decision, _)| decision).collect()
}

/// Each continuation a judge or a stop hook sent: the plugin and its message.
pub fn continued(events: &[Event]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Continued { plugin, message } => Some((plugin.clone(), message.clone())),
            _ => None,
        })
        .collect()
}

/// Each turn a plugin stopped: the plugin, its reason and its line for the operator.
pub fn stopped(events: &[Event]) -> Vec<(String, TurnEnd, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::TurnStopped { plugin, reason, message } => {
                Some((plugin.clone(), *reason, message.clone()))
            }
            _ => None,
        })
        .collect()
}
