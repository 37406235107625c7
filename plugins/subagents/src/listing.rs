//! `/agents`'s answer: the agents found, where each came from and what of its file is not
//! carried over, the definitions skipped and the project folders left unread.

use std::fmt::Write as _;

use crate::catalog::Catalog;

pub fn plain(catalog: &Catalog) -> String {
    let mut text = match catalog.agents.len() {
        0 => "no agents found\n".to_owned(),
        1 => "1 agent:\n".to_owned(),
        count => format!("{count} agents:\n"),
    };
    for agent in &catalog.agents {
        let _ = writeln!(
            text,
            "  {} ({}, {}) {}",
            agent.name,
            agent.origin.as_str(),
            agent.format.vendor(),
            agent.path
        );
        for note in &agent.notes {
            let _ = writeln!(text, "    note: {note}");
        }
    }
    for problem in &catalog.problems {
        let _ = writeln!(text, "{}", problem.line());
    }
    for folder in &catalog.untrusted {
        let _ = writeln!(text, "not used: {folder} (project agents need `trust_project = true`)");
    }
    text.trim_end().to_owned()
}
