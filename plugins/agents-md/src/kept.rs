//! The session's reading of the AGENTS.md files, kept in its state so that `provide` reads
//! no file. A new reading is kept only when it differs, and only what is new in it is
//! reported: a broken file is said once, not at every turn.

use agent_host_sdk::{events, log, state};

use crate::config::Config;
use crate::scan::{self, Problem, Scan};

/// The state key the reading is kept under.
const SCAN_KEY: &str = "agents_md";
/// The event a file that could not be used is reported as.
const SKIPPED_EVENT: &str = "agents_md_skipped";

/// The reading as kept, without reading files.
pub fn kept() -> Result<Option<Scan>, String> {
    state::get(SCAN_KEY)
}

/// Reads the files anew, reports what changed and keeps the reading.
pub fn refresh(config: &Config) -> Result<Scan, String> {
    let scan = scan::scan(config);
    // One kept by an older version of the plugin that no longer fits is read anew.
    let before = kept().unwrap_or_default();
    if before.as_ref() != Some(&scan) {
        report(&scan, before.as_ref());
        state::set(SCAN_KEY, &scan)?;
    }
    Ok(scan)
}

/// Each problem the last reading did not have, as an event the operator sees and a warning;
/// what is offered in the log.
fn report(scan: &Scan, before: Option<&Scan>) {
    let known = |problem: &Problem| before.is_some_and(|before| before.problems.contains(problem));
    for problem in scan.problems.iter().filter(|problem| !known(problem)) {
        let line = problem.line();
        events::emit(SKIPPED_EVENT, problem, Some(&format!("agents-md: {line}")));
        log::warn(&line);
    }
    let bytes: usize = scan.files.iter().map(|file| file.text.len()).sum();
    let cut: Vec<String> =
        scan.files.iter().filter(|file| file.cut).map(|file| scan::file_path(&file.folder)).collect();
    let mut line = format!("{} AGENTS.md files offered ({bytes} bytes)", scan.files.len());
    if !cut.is_empty() {
        line.push_str(&format!("; cut at the cap: {}", cut.join(", ")));
    }
    if !scan.left_out.is_empty() {
        line.push_str(&format!("; left out past the cap: {}", scan.left_out.join(", ")));
    }
    log::info(&line);
}
