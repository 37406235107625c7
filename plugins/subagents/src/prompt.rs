//! What the plugin adds to the system prompt: the agents (each one's name and description)
//! and how to hand one a task, kept within `listing_kb`.

use crate::catalog::Catalog;

/// The list's heading and how to use it.
const INTRO: &str = "## Agents\n\n\
`task` hands a task to one of the agents below: a separate session with its own instructions \
and tools, whose final answer comes back as the tool's result. Use one when a task matches an \
agent's description, or to keep a long search or a side task out of this conversation. Give \
`agent` (a name below) and `prompt`: everything the agent needs to know, since it starts \
without this conversation unless `context` is `fork` (a copy of it, for a task that needs \
what was said here).\n\n";

/// The most characters of one description listed: a long one (with examples) is cut.
pub const MAX_LISTED_DESCRIPTION: usize = 400;

/// Each agent as `- `name`: description`, until the text would pass `budget` bytes; the rest
/// by name only, which is enough to start them.
pub fn listing(catalog: &Catalog, budget: usize) -> Option<String> {
    let agents = catalog.agents.iter().map(|agent| (agent.name.as_str(), one_line(&agent.description)));
    folder_catalog::budgeted_listing(INTRO, agents, budget, "More agents, by name only: ")
}

/// `description` on one line, cut at [`MAX_LISTED_DESCRIPTION`] characters. A folded YAML
/// one may hold line breaks; Claude Code's often hold a written `\n` in an unquoted string,
/// which YAML keeps as the two characters.
fn one_line(description: &str) -> String {
    let description = description.replace("\\n", " ");
    let words: Vec<&str> = description.split_whitespace().collect();
    let line = words.join(" ");
    match line.char_indices().nth(MAX_LISTED_DESCRIPTION) {
        Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
        None => line,
    }
}
