//! What the plugin adds to the system prompt: the catalog (each skill's name and description,
//! and how to load one), kept within `catalog_kb`.

use crate::catalog::Catalog;

/// The catalog's heading and how to use it.
const CATALOG_INTRO: &str = "## Skills\n\n\
Skills are instructions for particular tasks. When a task matches a skill's description, call \
`load_skill` with its name before starting, and follow what it says. `read_skill_resource` reads a \
file the skill refers to; `run_skill_script` runs one of its scripts.\n\n";

/// Each skill as `- `name`: description`, until the text would pass `budget` bytes; the rest
/// by name only, which is enough to load them.
pub fn catalog_text(catalog: &Catalog, budget: usize) -> Option<String> {
    let skills = catalog.skills.iter().map(|skill| {
        // A folded YAML description may hold line breaks; one line per skill reads best.
        let description = skill.description.split_whitespace().collect::<Vec<_>>().join(" ");
        (skill.name.as_str(), description)
    });
    folder_catalog::budgeted_listing(
        CATALOG_INTRO,
        skills,
        budget,
        "More skills, by name only (load one to read it): ",
    )
}
