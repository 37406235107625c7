//! The skills as the operator sees them: `/skills`'s answer and the view's text, from the
//! catalog and the skills loaded.

use std::fmt::Write as _;

use crate::catalog::Catalog;
use crate::loaded::Loaded;

/// Plain lines for `/skills`.
pub fn plain(catalog: &Catalog, loaded: &[Loaded]) -> String {
    let mut text = match catalog.skills.len() {
        0 => "no skills found\n".to_owned(),
        1 => "1 skill:\n".to_owned(),
        count => format!("{count} skills:\n"),
    };
    for skill in &catalog.skills {
        let mark = if is_loaded(loaded, &skill.name) { ", loaded" } else { "" };
        let _ = writeln!(text, "  {} ({}{mark}) {}", skill.name, skill.origin.as_str(), skill.dir);
    }
    for problem in &catalog.problems {
        let _ = writeln!(text, "{}", problem.line());
    }
    for folder in &catalog.untrusted {
        let _ = writeln!(text, "not used: {folder} (project skills need `trust_project = true`)");
    }
    text.trim_end().to_owned()
}

/// Markdown for the view.
pub fn markdown(catalog: &Catalog, loaded: &[Loaded]) -> String {
    let mut text = String::new();
    if catalog.skills.is_empty() {
        text.push_str("No skills found.\n");
    }
    for skill in &catalog.skills {
        let mark = if is_loaded(loaded, &skill.name) { " — **loaded**" } else { "" };
        let _ = writeln!(text, "- `{}` ({}){mark}", skill.name, skill.origin.as_str());
    }
    if !catalog.problems.is_empty() {
        text.push_str("\nSkipped:\n");
        for problem in &catalog.problems {
            let _ = writeln!(text, "- `{}`: {}", problem.path, problem.rules.join("; "));
        }
    }
    for folder in &catalog.untrusted {
        let _ = writeln!(text, "\nNot used: `{folder}` (project skills need `trust_project = true`).");
    }
    text.trim_end().to_owned()
}

fn is_loaded(loaded: &[Loaded], name: &str) -> bool {
    loaded.iter().any(|skill| skill.name == name)
}
