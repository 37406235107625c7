//! The skills the model loaded in this session, each with the id of the call that loaded it,
//! and their results pinned against compaction: the `pre-compact` hook finds where each
//! load's result stands in the history (contract 0.2.7, `history.result-of`) and names it in
//! `keep`, so a compaction — the compacting plugin's or the host's truncation — leaves the
//! skill's instructions where the model read them.

use agent_host_sdk::compaction::{CompactionBudget, MessageId, PreCompactOutcome};
use agent_host_sdk::{Context, history, state};
use serde::{Deserialize, Serialize};

use crate::config::Config;

/// The state key of the skills loaded, in the order they were first loaded.
const LOADED_KEY: &str = "loaded";

/// A skill as it was loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loaded {
    pub name: String,
    /// The call that loaded it last: its result holds the skill's instructions.
    #[serde(default)]
    pub call_id: Option<String>,
}

/// The skills loaded so far.
pub fn all() -> Result<Vec<Loaded>, String> {
    state::get_or_default(LOADED_KEY)
}

/// Notes that the call `call_id` loaded `name`; a skill loaded again is pinned by its latest
/// load only.
pub fn remember(name: &str, call_id: Option<&str>) -> Result<(), String> {
    let mut loaded = all()?;
    let call_id = call_id.map(str::to_owned);
    match loaded.iter_mut().find(|skill| skill.name == name) {
        Some(skill) => skill.call_id = call_id,
        None => loaded.push(Loaded { name: name.to_owned(), call_id }),
    }
    state::set(LOADED_KEY, &loaded)
}

/// The `pre-compact` hook: keep the result of every skill's last load that is still there.
pub fn pin(_ctx: &Context<Config>, _budget: &CompactionBudget) -> PreCompactOutcome {
    let loaded = all().unwrap_or_else(|error| {
        agent_host_sdk::log::error(&format!("the loaded skills cannot be read: {error}"));
        Vec::new()
    });
    let keep = loaded
        .iter()
        .filter_map(|skill| history::result_of(skill.call_id.as_deref()?))
        .map(MessageId::Message)
        .collect();
    PreCompactOutcome { veto: None, keep }
}
