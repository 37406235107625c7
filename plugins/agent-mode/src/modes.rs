//! The stock mode set and the stock instructions template, in our own words.

use serde::{Deserialize, Serialize};

/// One mode the agent can be in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mode {
    /// The name the model and the operator use; case-sensitive.
    pub name: String,
    /// The workflow the model follows in this mode, shown in the system prompt.
    pub description: String,
    /// Whether tools marked `mutates` may run in this mode.
    #[serde(default = "allow_by_default")]
    pub allow_mutating: bool,
    /// Whether the model may switch out of this mode on its own with `mode_set`. When it may
    /// not, its `mode_set` away from here asks the operator first. Unset means
    /// `allow_mutating`: a mode that forbids changes is one the model cannot lift by itself.
    /// Filled in by `configure`, so every later call sees a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_may_leave: Option<bool>,
}

impl Mode {
    /// Whether `mode_set` away from this mode runs without asking the operator.
    pub fn model_may_leave(&self) -> bool {
        self.model_may_leave.unwrap_or(self.allow_mutating)
    }
}

fn allow_by_default() -> bool {
    true
}

/// The planning workflow: interactive, read-only.
const PLAN: &str = "\
Work with the user to agree on a plan before anything is changed.
1. Analyse the request: what is being asked, and what would count as done.
2. Break the work into todos.
3. Where it sharpens the plan, look around with read-only tools (reading files, searching). \
Tools that change things are refused in this mode.
4. If something is unclear, ask the user one clarifying question at a time, offering options \
when there are natural ones, and wait for the answer before going on.
5. Write the plan down.
6. Present the plan and ask the user to approve it.
7. Only after the user has approved it, switch to `execute` and start the work.";

/// The execution workflow: autonomous.
const EXECUTE: &str = "\
Carry the work through on your own.
- A simple question just gets a direct answer.
- Otherwise make a plan as todos, or reuse the one already agreed, and work through it \
without stopping to ask.
- When something is ambiguous, pick the most reasonable option, go on, and say what you chose \
and why.
- Mark each todo complete as soon as it is done.
- Keep going until the result is ready.";

/// The stock system-prompt section; `{available_modes}` and `{current_mode}` are filled in.
pub const DEFAULT_TEMPLATE: &str = "\
## Working modes

You always work in one of the modes below. Each describes the workflow to follow.

{available_modes}

The current mode is `{current_mode}`. Call `mode_get` when you need to check it. Switch with \
`mode_set` only when the user has explicitly said you may. Follow the current mode's workflow \
for every substantive request.";

/// `plan` (no mutating tools) and `execute`.
pub fn default_modes() -> Vec<Mode> {
    vec![
        Mode { name: "plan".into(), description: PLAN.into(), allow_mutating: false, model_may_leave: None },
        Mode {
            name: "execute".into(),
            description: EXECUTE.into(),
            allow_mutating: true,
            model_may_leave: None,
        },
    ]
}

/// The modes as the template's `{available_modes}`: `#### name`, a blank line, the description.
pub fn render_modes(modes: &[Mode]) -> String {
    modes
        .iter()
        .map(|mode| format!("#### {}\n\n{}", mode.name, mode.description))
        .collect::<Vec<_>>()
        .join("\n\n")
}
