//! The agents of a session: found once (at session start, or by `/agents`) and kept in the
//! session's state, so that no model call reads a folder. What could not be used is kept
//! beside them, to be shown.

use agent_host_sdk::{events, log, state};
use serde::{Deserialize, Serialize};

use crate::config::{Config, Origin};
use crate::format::Format;
use crate::scan;

/// The state key the catalog is kept under.
const CATALOG_KEY: &str = "catalog";

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

/// The session's catalog: the one kept, or a scan kept now when there is none yet.
pub fn current(config: &Config) -> Result<Catalog, String> {
    match state::get::<Catalog>(CATALOG_KEY)? {
        Some(catalog) => Ok(catalog),
        None => rescan(config),
    }
}

/// The catalog as kept, without scanning: for `provide`, which must not read folders on
/// every call.
pub fn kept() -> Result<Option<Catalog>, String> {
    state::get(CATALOG_KEY)
}

/// Reads the configured folders anew, reports every skipped definition and keeps the result.
pub fn rescan(config: &Config) -> Result<Catalog, String> {
    let catalog = scan::scan(&config.roots(), &config.untrusted_roots(), config);
    report(&catalog);
    state::set(CATALOG_KEY, &catalog)?;
    Ok(catalog)
}

/// Each skipped definition as an event the operator sees and a warning in the host's log;
/// what an agent's file says that is not carried over, and untrusted project folders, in
/// the log only: they are the formats' and the configuration's doing, not faults.
fn report(catalog: &Catalog) {
    for problem in &catalog.problems {
        let line = problem.line();
        events::emit(INVALID_EVENT, problem, Some(&format!("subagents: {line}")));
        log::warn(&line);
    }
    for agent in &catalog.agents {
        for note in &agent.notes {
            log::info(&format!("agent `{}` ({}): {note}", agent.name, agent.path));
        }
    }
    for folder in &catalog.untrusted {
        log::info(&format!("project agents in {folder} are not used: `trust_project` is false"));
    }
    log::info(&format!("{} agents found", catalog.agents.len()));
}
