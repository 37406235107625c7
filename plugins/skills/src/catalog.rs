//! The skills of a session: found once (at session start, or by `/skills`) and kept in the
//! session's state, so that no model call reads a folder. What could not be used is kept
//! beside them, to be shown.

use agent_host_sdk::{events, log, state};
use serde::{Deserialize, Serialize};

use crate::config::{Config, Origin};
use crate::scan;

/// The state key the catalog is kept under.
const CATALOG_KEY: &str = "catalog";

/// One usable skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The skill's folder, as the plugin's sandbox names it.
    pub dir: String,
    pub origin: Origin,
}

/// A file that was skipped, and why (one type for every plugin that reads such files).
pub use folder_catalog::Problem;

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalog {
    /// The usable skills, in order of precedence: a name appears once.
    pub skills: Vec<Skill>,
    /// The SKILL.md files skipped, with why.
    pub problems: Vec<Problem>,
    /// Project folders that exist but were not read, because `trust_project` is off.
    pub untrusted: Vec<String>,
}

impl Catalog {
    /// The skill named `name`; the error lists the ones there are.
    pub fn find(&self, name: &str) -> Result<&Skill, String> {
        self.skills.iter().find(|skill| skill.name == name).ok_or_else(|| {
            if self.skills.is_empty() {
                format!("there is no skill named `{name}`: no skills were found")
            } else {
                let names: Vec<&str> = self.skills.iter().map(|skill| skill.name.as_str()).collect();
                format!("there is no skill named `{name}`; the skills are: {}", names.join(", "))
            }
        })
    }
}

/// The session's catalog: the one kept, or, when there is none yet (a tool called before the
/// session's first turn, or a session older than this plugin's loading), a scan kept now.
pub fn current(config: &Config) -> Result<Catalog, String> {
    match state::get::<Catalog>(CATALOG_KEY)? {
        Some(catalog) => Ok(catalog),
        None => rescan(config),
    }
}

/// The catalog as kept, without scanning: for `provide` and the view, which must not read
/// folders on every call.
pub fn kept() -> Result<Option<Catalog>, String> {
    state::get(CATALOG_KEY)
}

/// Scans the configured folders anew, reports every skipped SKILL.md and keeps the result.
pub fn rescan(config: &Config) -> Result<Catalog, String> {
    let catalog = scan::scan(&config.roots(), &config.untrusted_roots());
    report(&catalog);
    state::set(CATALOG_KEY, &catalog)?;
    Ok(catalog)
}

/// Each skipped SKILL.md as an event the operator sees and a warning in the host's log;
/// untrusted project folders in the log only, since leaving them out is the configuration's
/// choice, not a fault.
fn report(catalog: &Catalog) {
    for problem in &catalog.problems {
        let line = problem.line();
        events::emit("skill_invalid", problem, Some(&format!("skills: {line}")));
        log::warn(&line);
    }
    for folder in &catalog.untrusted {
        log::info(&format!("project skills in {folder} are not used: `trust_project` is false"));
    }
    log::info(&format!("{} skills found", catalog.skills.len()));
}
