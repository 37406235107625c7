//! The plugin's `[plugin.config]`: where skills are looked for, whether the project's own are
//! trusted, and the caps on what one call reads or runs. Every folder is named as the plugin's
//! sandbox sees it: project folders relative to the workspace (`/workspace`), user folders by
//! the guest path their `[plugin.grants.dirs]` entry gives them.

use agent_host_sdk::Requirement;
use folder_catalog::{granted_folder, no_repeats};
use serde::{Deserialize, Serialize};
use workspace_path::GUEST_ROOT;

/// The normalized configuration every call sees. Unknown keys are errors that name them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Folders of the operator's own skills (guest paths), always used.
    pub user_dirs: Vec<String>,
    /// Folders of the project's skills, relative to the workspace; used only when trusted.
    pub project_dirs: Vec<String>,
    /// Whether the project's skills are used. They come with the repository, written by
    /// whoever wrote it, and become instructions the model follows: off unless the operator
    /// says so.
    pub trust_project: bool,
    /// The most bytes `read_skill_resource` returns of one file, in KiB.
    pub max_file_kb: u32,
    /// The most the catalog in the system prompt takes, in KiB; past it skills are listed
    /// by name only.
    pub catalog_kb: u32,
    /// How long a skill's script may run, in milliseconds (the host also holds it to the
    /// plugin call's own deadline: `process_call_timeout_ms` for a plugin granted `process`).
    pub script_timeout_ms: u64,
    /// Bytes of a script's stdout, and separately of its stderr, kept, in KiB.
    pub script_output_kb: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            user_dirs: vec!["/user-skills".to_owned()],
            project_dirs: vec![".agents/skills".to_owned()],
            trust_project: false,
            max_file_kb: 64,
            catalog_kb: 8,
            script_timeout_ms: 30_000,
            script_output_kb: 64,
        }
    }
}

/// Where a skill was found, which decides whether it is trusted.
pub use folder_catalog::Origin;

/// A folder whose subfolders are skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Its guest path.
    pub dir: String,
    pub origin: Origin,
}

impl Config {
    /// The folders to scan, in order of precedence: the project's (when trusted) before the
    /// user's, so a project can give its own version of a skill the operator also has.
    pub fn roots(&self) -> Vec<Root> {
        let project = self.project_roots().filter(|_| self.trust_project);
        let user = self.user_dirs.iter().map(|dir| Root { dir: dir.clone(), origin: Origin::User });
        project.chain(user).collect()
    }

    /// The project folders left out because `trust_project` is off.
    pub fn untrusted_roots(&self) -> Vec<Root> {
        if self.trust_project { Vec::new() } else { self.project_roots().collect() }
    }

    fn project_roots(&self) -> impl Iterator<Item = Root> + '_ {
        self.project_dirs
            .iter()
            .map(|dir| Root { dir: format!("{GUEST_ROOT}/{dir}"), origin: Origin::Project })
    }

    pub fn max_file_bytes(&self) -> u64 {
        u64::from(self.max_file_kb) * 1024
    }

    pub fn catalog_bytes(&self) -> usize {
        self.catalog_kb as usize * 1024
    }

    pub fn script_output_bytes(&self) -> u64 {
        u64::from(self.script_output_kb) * 1024
    }
}

/// Checks the folders and caps, normalizing the folders' spelling. Nothing is required of the
/// host: scripts need `process = true`, and without it `run_skill_script` says so while the
/// rest works.
pub fn configure(config: &mut Config) -> Result<Vec<Requirement>, String> {
    for (index, dir) in config.user_dirs.iter_mut().enumerate() {
        *dir = user_dir(dir).map_err(|why| format!("`user_dirs[{index}]`: {why}"))?;
    }
    for (index, dir) in config.project_dirs.iter_mut().enumerate() {
        *dir = project_dir(dir).map_err(|why| format!("`project_dirs[{index}]`: {why}"))?;
    }
    no_repeats("user_dirs", &config.user_dirs)?;
    no_repeats("project_dirs", &config.project_dirs)?;
    if config.trust_project && config.project_dirs.is_empty() {
        return Err("`trust_project` is true but `project_dirs` is empty: name the workspace folders \
                    that hold the project's skills, such as \".agents/skills\""
            .to_owned());
    }
    for (name, value) in [
        ("max_file_kb", u64::from(config.max_file_kb)),
        ("catalog_kb", u64::from(config.catalog_kb)),
        ("script_timeout_ms", config.script_timeout_ms),
        ("script_output_kb", u64::from(config.script_output_kb)),
    ] {
        if value == 0 {
            return Err(format!("`{name}` must be at least 1"));
        }
    }
    Ok(Vec::new())
}

/// A user folder: an absolute guest path outside the workspace, without `..`, spelt once.
fn user_dir(dir: &str) -> Result<String, String> {
    let normalized = granted_folder(dir, "/user-skills", "name the granted folder that holds the skills")?;
    if workspace_path::is_within(&normalized, GUEST_ROOT) {
        return Err(format!(
            "`{normalized}` is inside the workspace; list it under `project_dirs` (relative to the \
             workspace), where `trust_project` decides whether it is used"
        ));
    }
    Ok(normalized)
}

/// A project folder: inside the workspace, relative to it, spelt once.
fn project_dir(dir: &str) -> Result<String, String> {
    let relative = workspace_path::normalize(dir).map_err(|error| error.to_string())?;
    if relative == "." {
        return Err(format!(
            "`{}` is the workspace itself; name the folder that holds the skills, such as \".agents/skills\"",
            dir.trim()
        ));
    }
    Ok(relative)
}
