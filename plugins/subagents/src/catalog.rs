//! The agents of a session: found once (at session start, or by `/agents`) and kept in the
//! session's state as every [`FolderCatalog`] is, so that no model call reads a folder. What
//! could not be used is kept beside them, to be shown.

use agent_host_sdk::log;
use folder_catalog::FolderCatalog;
use serde::{Deserialize, Serialize};

use crate::config::{Config, Origin};
use crate::format::Format;
use crate::{prompt, scan};

/// The event an operator sees for each definition skipped.
const INVALID_EVENT: &str = "subagent_invalid";

/// One agent the model may start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    pub name: String,
    pub description: String,
    /// Its definition, as the plugin's sandbox names it; read again by `task`.
    pub path: String,
    pub format: Format,
    pub origin: Origin,
    /// What of its file is not carried over.
    pub notes: Vec<String>,
}

/// A file that was skipped, and why (one type for every plugin that reads such files).
pub use folder_catalog::Problem;

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalog {
    /// The agents, in order of precedence: a name appears once.
    pub agents: Vec<Agent>,
    /// The definitions skipped, with why.
    pub problems: Vec<Problem>,
    /// Project folders that exist but were not read, because `trust_project` is off.
    pub untrusted: Vec<String>,
}

impl Catalog {
    /// The agent named `name`; the error lists the ones there are.
    pub fn find(&self, name: &str) -> Result<&Agent, String> {
        self.agents.iter().find(|agent| agent.name == name).ok_or_else(|| {
            if self.agents.is_empty() {
                format!("there is no agent named `{name}`: no agents are defined")
            } else {
                let names: Vec<String> =
                    self.agents.iter().map(|agent| format!("`{}`", agent.name)).collect();
                format!("there is no agent named `{name}`; the agents are: {}", names.join(", "))
            }
        })
    }
}

impl FolderCatalog for Catalog {
    type Config = Config;
    const FOUND: &'static str = "agents";

    fn scan(config: &Config) -> Self {
        scan::scan(&config.roots(), &config.untrusted_roots(), config)
    }

    /// Each skipped definition as an event the operator sees and a warning in the host's log;
    /// what an agent's file says that is not carried over, and untrusted project folders, in
    /// the log only: they are the formats' and the configuration's doing, not faults.
    fn report(&self) {
        folder_catalog::report_skipped(&self.problems, INVALID_EVENT, "subagents");
        for agent in &self.agents {
            for note in &agent.notes {
                log::info(&format!("agent `{}` ({}): {note}", agent.name, agent.path));
            }
        }
        folder_catalog::report_untrusted(&self.untrusted, Self::FOUND);
        log::info(&format!("{} agents found", self.agents.len()));
    }

    fn instructions(&self, config: &Config) -> Option<String> {
        prompt::listing(self, config.listing_bytes())
    }
}
