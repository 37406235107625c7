//! The `compaction` plugin: the stock compactor. When a session's next request passes a
//! share of the room the model has, it first evicts old tool results (each group of old tool
//! calls becomes one line per call saying what was called and how much was removed); if that
//! is not enough it has the model summarise the older conversation; and if even that does
//! not bring the history under the host's limit, it says so and the host truncates.
//!
//! ```toml
//! [plugin.config]
//! evict_above_percent = 50       # past this share of the room, evict old tool results
//! summarise_above_percent = 80   # past this share after eviction, summarise
//! keep_recent_groups = 4         # the newest groups are never touched
//! summary_max_tokens = 1000      # the summary's size
//! ```
//!
//! Summarising asks the deployment's model, which needs `model = true` under the plugin's
//! `[plugin.grants]`; without it eviction still works, and a summary that is needed fails
//! with the host's reason (and the host truncates). The plugin keeps no state.

mod config;
mod groups;
mod pipeline;
mod summary;

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

use agent_host_sdk::Plugin;
use agent_host_sdk::compaction::{Compaction, CompactionBudget, HistoryMessage};
use agent_host_sdk::model::{self, ChatMessage, CompleteOptions};

use config::Config;
use summary::SummaryRequest;

/// The plugin's declaration.
pub fn plugin() -> Plugin<Config> {
    Plugin::new("compaction", env!("CARGO_PKG_VERSION"))
        .configure(config::configure)
        .compact_trigger(config::trigger)
        .on_compact(compact)
}

fn compact(
    ctx: &agent_host_sdk::Context<Config>,
    history: &[HistoryMessage],
    budget: &CompactionBudget,
) -> Result<Option<Compaction>, String> {
    pipeline::compact(&ctx.config, history, budget, ask_model)
}

/// Asks the deployment's model for the summary.
fn ask_model(request: &SummaryRequest) -> Result<String, String> {
    let messages = [ChatMessage::system(&request.system), ChatMessage::user(&request.transcript)];
    model::complete(&messages, CompleteOptions::max_output_tokens(request.max_output_tokens))
        .map(|answer| answer.text)
}

agent_host_sdk::export_plugin!(plugin);
