//! The plugin's `[plugin.config]`: where definitions are read, whether the project's own are
//! trusted, and what the formats' words mean in this deployment (models, the tools a denial is
//! taken from). Every folder is named as the plugin's sandbox sees it: the granted ones by the
//! guest path their `[plugin.grants.dirs]` entry gives them.

use std::collections::BTreeMap;

use agent_host_sdk::Requirement;
use folder_catalog::{granted_folder, no_repeats};
use serde::{Deserialize, Serialize};
use workspace_path::GUEST_ROOT;

use crate::format::Format;

/// The normalized configuration every call sees. Unknown keys are errors that name them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The operator's folders of definitions (guest paths), always read: a path for our own
    /// format, or `{ path, format }` for another agent's.
    pub dirs: Vec<Dir>,
    /// Whether the project's definitions are read. They come with the repository, written by
    /// whoever wrote it, and become a child's instructions and tools: off unless the operator
    /// says so.
    pub trust_project: bool,
    /// Where the workspace is in the plugin's sandbox (its project folders are under it).
    pub workspace: String,
    /// Model names as definitions write them (`sonnet`, `anthropic/claude-sonnet-4-5`) to the
    /// endpoint's model names; what is not here is read as each format says.
    pub models: BTreeMap<String, String>,
    /// The tools a definition that only denies tools keeps the rest of: a plugin cannot see
    /// what its session is offered, so "every tool but `shell`" is taken from this list.
    pub all_tools: Vec<String>,
    /// The most the list of agents in the system prompt takes, in KiB; past it agents are
    /// listed by name only.
    pub listing_kb: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            dirs: vec![Dir { path: "/user-agents".to_owned(), format: Format::Agents }],
            trust_project: false,
            workspace: GUEST_ROOT.to_owned(),
            models: BTreeMap::new(),
            all_tools: ["read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "shell"]
                .map(str::to_owned)
                .to_vec(),
            listing_kb: 4,
        }
    }
}

/// A granted folder of definitions, all in one format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dir {
    pub path: String,
    pub format: Format,
}

/// A `dirs` entry as written: a path alone (our format), or a table.
impl<'de> Deserialize<'de> for Dir {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            path: String,
            #[serde(default = "ours")]
            format: Format,
        }
        fn ours() -> Format {
            Format::Agents
        }
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Dir;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a folder's path, or a table { path, format }")
            }
            fn visit_str<E: serde::de::Error>(self, path: &str) -> Result<Dir, E> {
                Ok(Dir { path: path.to_owned(), format: Format::Agents })
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<Dir, M::Error> {
                let table = Table::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Dir { path: table.path, format: table.format })
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// Where a definition was found, which decides whether it is trusted.
pub use folder_catalog::Origin;

/// A folder whose `*.md` files are definitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Its guest path.
    pub dir: String,
    pub format: Format,
    pub origin: Origin,
}

impl Config {
    /// The folders to read, in order of precedence: the project's (when trusted) before the
    /// operator's, as the agents whose formats these are read them.
    pub fn roots(&self) -> Vec<Root> {
        let project = self.project_roots().filter(|_| self.trust_project);
        let user = self.dirs.iter().map(|dir| Root {
            dir: dir.path.clone(),
            format: dir.format,
            origin: Origin::User,
        });
        project.chain(user).collect()
    }

    /// The project folders left out because `trust_project` is off.
    pub fn untrusted_roots(&self) -> Vec<Root> {
        if self.trust_project { Vec::new() } else { self.project_roots().collect() }
    }

    fn project_roots(&self) -> impl Iterator<Item = Root> + '_ {
        Format::ALL.into_iter().map(|format| Root {
            dir: format!("{}/{}", self.workspace, format.project_folder()),
            format,
            origin: Origin::Project,
        })
    }

    pub fn listing_bytes(&self) -> usize {
        self.listing_kb as usize * 1024
    }
}

/// Checks the folders, names and caps, normalizing the folders' spelling. Nothing is required
/// through `configure`: starting children needs `agents = true`, which `task` names when it
/// is missing.
pub fn configure(config: &mut Config) -> Result<Vec<Requirement>, String> {
    config.workspace = guest_dir(&config.workspace).map_err(|why| format!("`workspace`: {why}"))?;
    for (index, dir) in config.dirs.iter_mut().enumerate() {
        let path = guest_dir(&dir.path).map_err(|why| format!("`dirs[{index}]`: {why}"))?;
        if workspace_path::is_within(&path, &config.workspace) {
            return Err(format!(
                "`dirs[{index}]`: `{path}` is inside the workspace ({}); the project's folders are read \
                 only with `trust_project = true`",
                config.workspace
            ));
        }
        dir.path = path;
    }
    let paths: Vec<&str> = config.dirs.iter().map(|dir| dir.path.as_str()).collect();
    no_repeats("dirs", &paths)?;
    for (index, tool) in config.all_tools.iter_mut().enumerate() {
        *tool = tool.trim().to_owned();
        if tool.is_empty() {
            return Err(format!("`all_tools[{index}]` is blank; name a tool"));
        }
    }
    for (written, model) in &config.models {
        if written.trim().is_empty() || model.trim().is_empty() {
            return Err(format!("`models`: `{written}` = `{model}` is blank on one side; name both models"));
        }
    }
    if config.listing_kb == 0 {
        return Err("`listing_kb` must be at least 1".to_owned());
    }
    Ok(Vec::new())
}

/// A granted folder: an absolute guest path without `..`, spelt once.
fn guest_dir(dir: &str) -> Result<String, String> {
    granted_folder(dir, "/user-agents", "name the granted folder itself")
}
