//! What the plugin adds to the system prompt: the catalog (each skill's name and description,
//! and how to load one), kept within `catalog_kb`.

use std::fmt::Write as _;

use crate::catalog::Catalog;

/// The catalog's heading and how to use it.
const CATALOG_INTRO: &str = "## Skills\n\n\
Skills are instructions for particular tasks. When a task matches a skill's description, call \
`load_skill` with its name before starting, and follow what it says. `read_skill_resource` reads a \
file the skill refers to; `run_skill_script` runs one of its scripts.\n\n";

/// Each skill as `- `name`: description`, until the text would pass `budget` bytes; the rest
/// by name only, which is enough to load them.
pub fn catalog_text(catalog: &Catalog, budget: usize) -> Option<String> {
    if catalog.skills.is_empty() {
        return None;
    }
    let mut text = CATALOG_INTRO.to_owned();
    let mut by_name_only = Vec::new();
    for skill in &catalog.skills {
        // A folded YAML description may hold line breaks; one line per skill reads best.
        let description = skill.description.split_whitespace().collect::<Vec<_>>().join(" ");
        let line = format!("- `{}`: {description}\n", skill.name);
        if by_name_only.is_empty() && text.len() + line.len() <= budget {
            text.push_str(&line);
        } else {
            by_name_only.push(format!("`{}`", skill.name));
        }
    }
    if !by_name_only.is_empty() {
        let _ =
            writeln!(text, "More skills, by name only (load one to read it): {}", by_name_only.join(", "));
    }
    Some(text)
}
