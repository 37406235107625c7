//! The plugin's logic, natively: real folders in a temporary directory stand in for the
//! granted ones (a user folder may be any absolute path), the SDK's stand-ins for the host.

mod confine;
mod plugin;
mod prompt;
mod rules;
mod scan;

use std::path::Path;

use agent_host_sdk::testing::Harness;
use serde_json::{Value, json};

use crate::config::Config;

/// A folder of skills being written.
pub struct Folder {
    pub dir: tempfile::TempDir,
}

impl Folder {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().expect("a temporary folder") }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Its path as a config names it.
    pub fn config_path(&self) -> String {
        self.path().to_str().expect("a UTF-8 temporary path").to_owned()
    }

    /// Writes `folder/SKILL.md` with `text`.
    pub fn skill_md(&self, folder: &str, text: &str) -> &Self {
        self.file(&format!("{folder}/SKILL.md"), text)
    }

    /// A valid skill `name` whose description is `description` and body `body`.
    pub fn skill(&self, name: &str, description: &str, body: &str) -> &Self {
        self.skill_md(name, &format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n"))
    }

    /// Writes `path` (relative to the folder) with `text`, making its folders.
    pub fn file(&self, path: &str, text: &str) -> &Self {
        let at = self.path().join(path);
        std::fs::create_dir_all(at.parent().expect("a file has a folder")).expect("make the folders");
        std::fs::write(at, text).expect("write the file");
        self
    }

    /// A symlink at `path` (relative to the folder) to `target`, as written.
    pub fn link(&self, path: &str, target: &str) -> &Self {
        let at = self.path().join(path);
        std::fs::create_dir_all(at.parent().expect("a link has a folder")).expect("make the folders");
        std::os::unix::fs::symlink(target, at).expect("make the link");
        self
    }
}

/// The plugin configured with `folder` as its one user folder and `extra` config keys.
pub fn harness(folder: &Folder, extra: Value) -> Harness<Config> {
    let mut config = json!({"user_dirs": [folder.config_path()], "project_dirs": []});
    for (key, value) in extra.as_object().expect("extra keys are an object") {
        config[key] = value.clone();
    }
    Harness::new(crate::plugin(), config).expect("the config is accepted")
}
