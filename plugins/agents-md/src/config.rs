//! The plugin's `[plugin.config]`: which folder is the workspace, whether its AGENTS.md files
//! are trusted, and how much of them, and how deep, is read.

use agent_host_sdk::Requirement;
use serde::{Deserialize, Serialize};

/// The most `max_kb` may be: the files' text is kept in the session's state, whose values
/// the host caps (`state_value_kb`, 4 MiB by default), and a system prompt of more than a
/// MiB of instructions leaves the model no room to work.
pub const MAX_KB_LIMIT: u32 = 1024;

/// The normalized configuration every call sees. Unknown keys are errors that name them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The workspace folder as the plugin's sandbox sees it: the guest path its
    /// `[plugin.grants.dirs]` entry gives it.
    pub workspace: String,
    /// Whether the workspace's AGENTS.md files are read. They come with the repository,
    /// written by whoever wrote it, and become instructions the model follows: off unless
    /// the operator says so.
    pub trust_project: bool,
    /// The most text of the files offered, all together, in KiB.
    pub max_kb: u32,
    /// How many folders below the workspace the walk goes: 0 reads the root's AGENTS.md only.
    pub max_depth: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self { workspace: "/workspace".to_owned(), trust_project: false, max_kb: 32, max_depth: 8 }
    }
}

impl Config {
    pub fn max_bytes(&self) -> usize {
        self.max_kb as usize * 1024
    }
}

/// Checks the workspace's path and the caps, spelling the path once. Nothing is required of
/// the host: the workspace is a folder grant, which the host has no requirement for; an
/// ungranted one is reported when it cannot be read.
pub fn configure(config: &mut Config) -> Result<Vec<Requirement>, String> {
    config.workspace = workspace(&config.workspace).map_err(|why| format!("`workspace`: {why}"))?;
    if config.max_kb == 0 || config.max_kb > MAX_KB_LIMIT {
        return Err(format!(
            "`max_kb` is {}; it must be from 1 to {MAX_KB_LIMIT} (KiB of AGENTS.md text in the system prompt)",
            config.max_kb
        ));
    }
    Ok(Vec::new())
}

/// The workspace: an absolute guest path without `..`, not `/`, spelt once.
fn workspace(path: &str) -> Result<String, String> {
    let trimmed = path.trim();
    if !trimmed.starts_with('/') {
        return Err(format!(
            "`{trimmed}` is not an absolute path; name the folder as the plugin's [plugin.grants.dirs] \
             maps it, such as \"/workspace\""
        ));
    }
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(format!("`{trimmed}` contains `..`; name the granted folder itself")),
            part if part.contains('\0') => {
                return Err(format!("`{}` holds a NUL character", trimmed.escape_debug()));
            }
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(
            "`/` is the whole sandbox; name the granted workspace folder, such as \"/workspace\"".to_owned()
        );
    }
    Ok(format!("/{}", parts.join("/")))
}
