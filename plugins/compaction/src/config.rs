//! The plugin's `[plugin.config]`: when to evict, when to summarise, and what to leave alone.

use agent_host_sdk::Requirement;
use serde::{Deserialize, Serialize};

/// The normalized configuration every call sees. Unknown keys are errors that name them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Past this share of the room (percent), old tool results are evicted.
    pub evict_above_percent: u32,
    /// Past this share, after eviction, the older conversation is summarised by the model.
    pub summarise_above_percent: u32,
    /// The newest groups (a message, or a tool-calling message with its results) that are
    /// never touched.
    pub keep_recent_groups: u32,
    /// The most tokens the summary may take.
    pub summary_max_tokens: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            evict_above_percent: 50,
            summarise_above_percent: 80,
            keep_recent_groups: 4,
            summary_max_tokens: 1000,
        }
    }
}

/// Checks the thresholds together. Nothing is required of the host: summarising asks the
/// model, which needs `model = true`, and without it a summary fails (and the host truncates)
/// while eviction still works.
pub fn configure(config: &mut Config) -> Result<Vec<Requirement>, String> {
    for (name, percent) in [
        ("evict_above_percent", config.evict_above_percent),
        ("summarise_above_percent", config.summarise_above_percent),
    ] {
        if !(1..=100).contains(&percent) {
            return Err(format!("`{name}` must be between 1 and 100, not {percent}"));
        }
    }
    if config.evict_above_percent >= config.summarise_above_percent {
        return Err(format!(
            "`evict_above_percent` ({}) must be below `summarise_above_percent` ({}): old tool results are \
             evicted before the conversation is summarised",
            config.evict_above_percent, config.summarise_above_percent
        ));
    }
    if config.keep_recent_groups == 0 {
        return Err("`keep_recent_groups` must be at least 1: the newest group is what the next reply follows on from"
            .to_owned());
    }
    if config.summary_max_tokens == 0 {
        return Err("`summary_max_tokens` must be at least 1".to_owned());
    }
    Ok(Vec::new())
}

/// The share past which the host asks for a compaction: the lower of the two thresholds.
pub fn trigger(config: &Config) -> Option<u8> {
    u8::try_from(config.evict_above_percent.min(config.summarise_above_percent)).ok()
}
