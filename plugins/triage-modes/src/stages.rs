//! The three stages, in order, and what the model does in each.

/// One stage of the triage workflow.
pub struct Stage {
    /// The name, as stored under `mode` and used by `advance_stage`.
    pub name: &'static str,
    /// How a person sees it, and one line on what happens in it (the view's option).
    pub label: &'static str,
    pub summary: &'static str,
    /// The stage's own system-prompt instructions.
    pub instructions: &'static str,
}

/// The stages in the only order they can be entered.
pub const STAGES: [Stage; 3] = [
    Stage {
        name: "triage",
        label: "Triage",
        summary: "Work out what the report is about and write the open questions down",
        instructions: "\
You are triaging. Work out what the report is really about, how severe it is and what is \
still unknown. Write each open question down as a todo. Do not try to fix anything yet. \
When the questions are written down, call `advance_stage` with `research`.",
    },
    Stage {
        name: "research",
        label: "Research",
        summary: "Answer the open questions; review opens when every todo is done",
        instructions: "\
You are researching. Answer the open questions one by one with the tools you have, and mark \
each todo complete as soon as it is answered. The review stage stays closed while any todo \
is open. When every todo is done, call `advance_stage` with `review`.",
    },
    Stage {
        name: "review",
        label: "Review",
        summary: "Summarise the findings and recommend what comes next",
        instructions: "\
You are reviewing. Summarise what was found, how confident you are in each finding and what \
you recommend next. This is the last stage.",
    },
];

/// The position of `name` in [`STAGES`].
pub fn position(name: &str) -> Option<usize> {
    STAGES.iter().position(|stage| stage.name == name)
}

/// The stage names, for error messages: "`triage`, `research`, `review`".
pub fn names() -> String {
    STAGES.iter().map(|stage| format!("`{}`", stage.name)).collect::<Vec<_>>().join(", ")
}
