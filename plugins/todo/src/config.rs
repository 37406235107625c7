//! The plugin's `[plugin.config]`, with `[plugin.config.loop]` for the completion loop.

use agent_host_sdk::Requirement;
use completion_loop::LoopConfig;
use serde::{Deserialize, Serialize};

/// Guidance for the model when the operator does not supply `instructions`.
const DEFAULT_INSTRUCTIONS: &str = "\
You can keep a todo list with the todos_* tools. Use it with judgement:
- If a request is simple (one or two obvious steps), just do it; no list is needed.
- If it is complex or has several parts, break it into todos first, then work through them.
- If the request is unclear, ask the user to clarify before planning.
- When the user gives feedback, adjust the list to match: add, remove or reword todos.
- Mark each todo complete as soon as it is done, not all at the end.
- Remove todos that no longer apply.
- When the user moves on to a different topic, clear out the old list and start fresh.";

/// What the stop hook says while todos are still open.
const DEFAULT_CONTINUE: &str = "\
You are not finished: these todos are still open:
{remaining_todos}
Carry on with them. Mark each one complete when it is done, or remove it if it no longer applies.";

/// The normalized configuration every call sees.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Inject the current list before every model call.
    pub inject_list: bool,
    /// How one item is rendered; placeholders `{id}` `{status}` `{title}` `{description}`.
    /// None means the built-in `- {id} [{status}] {title}: {description}` form.
    pub item_template: Option<String>,
    /// Guidance for the system prompt. Left out of the settled configuration while it is the
    /// default: the host hands that text to every call, and each instance parses it.
    #[serde(skip_serializing_if = "is_default_instructions")]
    pub instructions: String,
    /// The completion loop.
    #[serde(rename = "loop")]
    pub completion: LoopConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            inject_list: true,
            item_template: None,
            instructions: DEFAULT_INSTRUCTIONS.to_owned(),
            completion: LoopConfig::default(),
        }
    }
}

fn is_default_instructions(text: &str) -> bool {
    text == DEFAULT_INSTRUCTIONS
}

/// Checks the parsed table together and fills in the loop's default reminder.
pub fn configure(config: &mut Config) -> Result<Vec<Requirement>, String> {
    config.completion.settle(DEFAULT_CONTINUE)
}
