//! The skills of a session: found once (at session start, or by `/skills`) and kept in the
//! session's state as every [`FolderCatalog`] is, so that no model call reads a folder. What
//! could not be used is kept beside them, to be shown.

use agent_host_sdk::log;
use folder_catalog::FolderCatalog;
use serde::{Deserialize, Serialize};

use crate::config::{Config, Origin};
use crate::{prompt, scan};

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

impl FolderCatalog for Catalog {
    type Config = Config;
    const FOUND: &'static str = "skills";

    fn scan(config: &Config) -> Self {
        scan::scan(&config.roots(), &config.untrusted_roots())
    }

    /// Each skipped SKILL.md as an event the operator sees and a warning in the host's log;
    /// untrusted project folders in the log only.
    fn report(&self) {
        folder_catalog::report_skipped(&self.problems, "skill_invalid", "skills");
        folder_catalog::report_untrusted(&self.untrusted, Self::FOUND);
        log::info(&format!("{} skills found", self.skills.len()));
    }

    fn instructions(&self, config: &Config) -> Option<String> {
        prompt::catalog_text(self, config.catalog_bytes())
    }
}
