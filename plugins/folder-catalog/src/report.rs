//! What a scan tells the operator and the host's log, in the same words for every plugin.

use agent_host_sdk::{events, log};

use crate::Problem;

/// Each skipped file as the `event` the operator sees, its line opened by the `plugin`'s
/// name, and a warning in the host's log.
pub fn report_skipped(problems: &[Problem], event: &str, plugin: &str) {
    for problem in problems {
        let line = problem.line();
        events::emit(event, problem, Some(&format!("{plugin}: {line}")));
        log::warn(&line);
    }
}

/// The project folders left unread, in the log only: leaving them out is the configuration's
/// choice, not a fault. `found` is what they would hold, plural (`skills`).
pub fn report_untrusted(untrusted: &[String], found: &str) {
    for folder in untrusted {
        log::info(&format!("project {found} in {folder} are not used: `trust_project` is false"));
    }
}
