//! The plugin's `[plugin.config]`, with `[plugin.config.loop]` for the completion loop.

use agent_host_sdk::Requirement;
use completion_loop::LoopConfig;
use serde::{Deserialize, Serialize};

const DEFAULT_INSTRUCTIONS: &str = "\
Track multi-step work with the TodoWrite tool. Each call sends the whole list: every item \
with its content (what to do), activeForm (the same step phrased as ongoing work, e.g. \
\"Running the tests\") and status (pending, in_progress or completed). Skip the list for \
small one-step requests. Keep one item in_progress at a time, and mark items completed as \
soon as they are done rather than in a batch at the end.";

const DEFAULT_CONTINUE: &str = "\
Some todos are not completed yet:
{remaining_todos}
Keep working on them, and update the list with TodoWrite as you go.";

/// The normalized configuration every call sees.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Guidance for the system prompt. Left out of the settled configuration while it is the
    /// default: the host hands that text to every call, and each instance parses it.
    #[serde(skip_serializing_if = "is_default_instructions")]
    pub instructions: String,
    /// The longest list one TodoWrite call may send.
    pub max_items: usize,
    /// Remind the model after this many model calls without a write; 0 turns it off.
    pub nag_after_rounds: u64,
    /// The completion loop.
    #[serde(rename = "loop")]
    pub completion: LoopConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            instructions: DEFAULT_INSTRUCTIONS.to_owned(),
            max_items: 20,
            nag_after_rounds: 10,
            completion: LoopConfig::default(),
        }
    }
}

fn is_default_instructions(text: &str) -> bool {
    text == DEFAULT_INSTRUCTIONS
}

/// Checks the parsed table together and fills in the loop's default reminder.
pub fn configure(config: &mut Config) -> Result<Vec<Requirement>, String> {
    if config.max_items == 0 {
        return Err("`max_items` must be at least 1".to_owned());
    }
    config.completion.settle(DEFAULT_CONTINUE)
}
