//! What each plugin's own model calls (`model.complete`) have used in a session: kept in
//! the session's state bag under a namespace of the host's, so it is stored, forked and
//! exported with the session, and survives a resume, while no plugin can write it (a
//! plugin writes only its own namespace, and plugin names cannot hold a dot).

use serde::{Deserialize, Serialize};

use super::StateBag;

/// The host's namespace for plugins' model usage, one key per plugin name.
pub const MODEL_USAGE_NAMESPACE: &str = "agent-host.model-usage";

/// One plugin's model calls in one session, as the endpoint counted their tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginModelUsage {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl PluginModelUsage {
    /// What `plugin`'s model calls have used in the session `bag` belongs to.
    pub fn of(bag: &StateBag, plugin: &str) -> Self {
        bag.get(MODEL_USAGE_NAMESPACE, plugin)
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// What every plugin's model calls have used in the session `bag` belongs to.
    pub fn total(bag: &StateBag) -> Self {
        let used = bag.namespace(MODEL_USAGE_NAMESPACE).into_values();
        used.filter_map(|text| serde_json::from_str::<Self>(&text).ok()).fold(Self::default(), |all, one| {
            Self {
                calls: all.calls.saturating_add(one.calls),
                input_tokens: all.input_tokens.saturating_add(one.input_tokens),
                output_tokens: all.output_tokens.saturating_add(one.output_tokens),
            }
        })
    }

    /// Input and output tokens together: what a session budget counts.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Adds one call of `plugin` to the session's count, at once: tokens spent stay spent
    /// even when the plugin's call then fails.
    pub fn add(bag: &StateBag, plugin: &str, input_tokens: u64, output_tokens: u64) -> Self {
        let before = Self::of(bag, plugin);
        let after = Self {
            calls: before.calls + 1,
            input_tokens: before.input_tokens.saturating_add(input_tokens),
            output_tokens: before.output_tokens.saturating_add(output_tokens),
        };
        let text = serde_json::to_string(&after).expect("usage serializes");
        bag.put(MODEL_USAGE_NAMESPACE, plugin, Some(text));
        after
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_add_up_per_plugin_and_are_a_change_the_step_commits() {
        let bag = StateBag::default();
        PluginModelUsage::add(&bag, "summary", 120, 30);
        let total = PluginModelUsage::add(&bag, "summary", 200, 50);
        assert_eq!(total, PluginModelUsage { calls: 2, input_tokens: 320, output_tokens: 80 });
        assert_eq!(total.tokens(), 400);
        assert_eq!(PluginModelUsage::of(&bag, "judge"), PluginModelUsage::default());
        let changes = bag.take_changes();
        assert_eq!(changes.len(), 1);
        assert_eq!(
            (changes[0].namespace.as_str(), changes[0].key.as_str()),
            (MODEL_USAGE_NAMESPACE, "summary")
        );
    }

    #[test]
    fn the_total_adds_every_plugins_calls() {
        let bag = StateBag::default();
        assert_eq!(PluginModelUsage::total(&bag), PluginModelUsage::default());
        PluginModelUsage::add(&bag, "summary", 320, 80);
        PluginModelUsage::add(&bag, "judge", 7, 3);
        PluginModelUsage::add(&bag, "judge", 1, 1);
        let all = PluginModelUsage::total(&bag);
        assert_eq!(all, PluginModelUsage { calls: 3, input_tokens: 328, output_tokens: 84 });
    }
}
