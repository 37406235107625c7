//! Finding definitions: every `*.md` file directly in a configured folder, read as the
//! folder's format. A folder that does not exist (not granted, or not made) holds none; a
//! file with a problem is kept aside with every problem it has, and the rest still load.

use std::path::Path;

use agent_host_sdk::log;

use crate::catalog::{Agent, Catalog, Problem};
use crate::config::{Config, Root};
use crate::definition::{self, Read};

/// The most files read in one folder, so a huge folder cannot stall a call.
pub const MAX_FILES: usize = 256;

/// The agents under `roots` (an earlier root wins a name), and which of `untrusted` exist.
pub fn scan(roots: &[Root], untrusted: &[Root], config: &Config) -> Catalog {
    let mut catalog = Catalog::default();
    for root in roots {
        scan_root(root, config, &mut catalog);
    }
    catalog.untrusted =
        untrusted.iter().filter(|root| Path::new(&root.dir).is_dir()).map(|root| root.dir.clone()).collect();
    catalog
}

fn scan_root(root: &Root, config: &Config, catalog: &mut Catalog) {
    let entries = match std::fs::read_dir(&root.dir) {
        Ok(entries) => entries,
        Err(error) => {
            log::debug(&format!("no agents in {}: {error}", root.dir));
            return;
        }
    };
    let mut files: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        // Hidden files are an editor's or a tool's, never a definition.
        .filter(|name| name.ends_with(".md") && !name.starts_with('.'))
        .collect();
    files.sort();
    if files.len() > MAX_FILES {
        catalog.problems.push(Problem {
            path: root.dir.clone(),
            rules: vec![format!(
                "it holds {} definitions; only the first {MAX_FILES} by name were read",
                files.len()
            )],
        });
        files.truncate(MAX_FILES);
    }
    for file in files {
        let path = format!("{}/{file}", root.dir);
        match definition::read_file(Path::new(&path), root.format, config) {
            Err(rules) => catalog.problems.push(Problem { path, rules }),
            Ok(Read::NotOffered(why)) => log::info(&format!("{path} is not offered as an agent: {why}")),
            Ok(Read::Offered(found)) => {
                if let Some(first) = catalog.agents.iter().find(|agent| agent.name == found.name) {
                    let why =
                        format!("the name `{}` is already taken by {}, read first", found.name, first.path);
                    catalog.problems.push(Problem { path, rules: vec![why] });
                    continue;
                }
                catalog.agents.push(Agent {
                    name: found.name,
                    description: found.description,
                    path,
                    format: root.format,
                    origin: root.origin,
                    notes: found.notes,
                });
            }
        }
    }
}
