//! What a session's own model calls cost when their endpoint reported no usage (many local
//! servers and proxies send none), as the host estimated them: the request as counted before
//! it was sent, the reply as counted when it came. Kept in the session's state bag under a
//! namespace of the host's, as plugins' model usage is, so that a budget over the whole
//! session (a plugin's, through `meter.session`) holds against such an endpoint and survives
//! a resume;
//! and kept apart from the usage endpoints reported, which calibrates the estimate and must
//! not calibrate it with itself.

use serde::{Deserialize, Serialize};

use super::StateBag;
use crate::events::TokenUsage;

/// The host's namespace for it; plugin names cannot hold a dot, so no plugin writes here.
pub const ESTIMATED_USAGE_NAMESPACE: &str = "agent-host.estimated-usage";
/// Its one key: the session's own model calls (plugins' are in `model_usage.rs`).
const KEY: &str = "model";

/// The session's model calls charged an estimate, and the tokens they were charged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EstimatedUsage {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl EstimatedUsage {
    /// What the session `bag` belongs to was charged so far.
    pub fn of(bag: &StateBag) -> Self {
        bag.get(ESTIMATED_USAGE_NAMESPACE, KEY)
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// Input and output tokens together: what a session budget counts.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Adds one call charged `usage`, as a change the session's next step commits.
    pub fn add(bag: &StateBag, usage: TokenUsage) -> Self {
        let before = Self::of(bag);
        let after = Self {
            calls: before.calls.saturating_add(1),
            input_tokens: before.input_tokens.saturating_add(usage.input_tokens),
            output_tokens: before.output_tokens.saturating_add(usage.output_tokens),
        };
        bag.put(
            ESTIMATED_USAGE_NAMESPACE,
            KEY,
            Some(serde_json::to_string(&after).expect("usage serializes")),
        );
        after
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimated_calls_add_up_and_are_a_change_the_step_commits() {
        let bag = StateBag::default();
        assert_eq!(EstimatedUsage::of(&bag), EstimatedUsage::default());
        let charged = |input, output| TokenUsage {
            input_tokens: input,
            output_tokens: output,
            ..TokenUsage::default()
        };
        EstimatedUsage::add(&bag, charged(2_000, 300));
        let total = EstimatedUsage::add(&bag, charged(2_400, 10));
        assert_eq!(total, EstimatedUsage { calls: 2, input_tokens: 4_400, output_tokens: 310 });
        assert_eq!(EstimatedUsage::of(&bag).tokens(), 4_710);
        let changes = bag.take_changes();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].namespace, ESTIMATED_USAGE_NAMESPACE);
    }
}
