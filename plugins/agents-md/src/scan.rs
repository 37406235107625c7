//! One reading of the workspace's AGENTS.md files, in the order they are offered, within the
//! cap: each file offered whole or cut, or left out once the cap is spent; a file that cannot
//! be used set aside with why, while the others are still read.

use std::collections::BTreeSet;
use std::path::Path;

use agent_host_sdk::log;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::read;
use crate::walk::{self, FILE_NAME, MAX_FOLDERS};

/// One AGENTS.md offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offered {
    /// Its folder, relative to the workspace; `""` for the root.
    pub folder: String,
    /// What is offered of it.
    pub text: String,
    /// The file's whole size, in bytes.
    pub size: u64,
    /// Whether `text` is less than the file.
    pub cut: bool,
}

/// An AGENTS.md (or the workspace) that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The file, as the plugin's sandbox names it.
    pub path: String,
    pub reason: String,
}

impl Problem {
    /// One line for the operator.
    pub fn line(&self) -> String {
        format!("skipped {}: {}", self.path, self.reason)
    }
}

/// What one reading found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scan {
    /// The files offered, the root's first, then by depth and path.
    pub files: Vec<Offered>,
    /// The files not offered because the cap was spent, by their path in the workspace.
    pub left_out: Vec<String>,
    pub problems: Vec<Problem>,
}

/// The path of the AGENTS.md in `folder`, relative to the workspace.
pub fn file_path(folder: &str) -> String {
    if folder.is_empty() { FILE_NAME.to_owned() } else { format!("{folder}/{FILE_NAME}") }
}

/// Reads the workspace's AGENTS.md files as `config` says. Call it only when trusted.
pub fn scan(config: &Config) -> Scan {
    let root = Path::new(&config.workspace);
    let mut scan = Scan::default();
    let walked = match walk::walk(root, config.max_depth) {
        Ok(walked) => walked,
        Err(reason) => {
            scan.problems.push(Problem { path: config.workspace.clone(), reason });
            return scan;
        }
    };
    if walked.stopped {
        scan.problems.push(Problem {
            path: config.workspace.clone(),
            reason: format!(
                "the walk stopped after reading {MAX_FOLDERS} folders; AGENTS.md files in the folders left \
                 were not looked for (a lower `max_depth` walks fewer)"
            ),
        });
    }
    let mut left = config.max_bytes();
    // A file reached twice (a nested AGENTS.md linked to the root's) is offered once, first.
    let mut seen = BTreeSet::new();
    for folder in walked.folders {
        let relative = file_path(&folder);
        if left == 0 {
            scan.left_out.push(relative);
            continue;
        }
        match read::read(root, &folder, left) {
            Err(reason) => {
                scan.problems.push(Problem { path: format!("{}/{relative}", config.workspace), reason });
            }
            Ok(read) if !seen.insert(read.real.clone()) => {
                log::debug(&format!("{relative} is the file {} already offered", read.real.join("/")));
            }
            Ok(read) if read.text.trim().is_empty() => {
                // Cut to nothing, it did not fit; empty, it has nothing to say.
                if read.cut {
                    left = 0;
                    scan.left_out.push(relative);
                }
            }
            Ok(read) => {
                left -= read.text.len();
                if read.cut {
                    // What is left is less than a line: nothing more fits.
                    left = 0;
                }
                scan.files.push(Offered { folder, text: read.text, size: read.size, cut: read.cut });
            }
        }
    }
    scan
}
