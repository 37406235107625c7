//! The plugin's logic, natively: real folders in a temporary directory stand in for the
//! granted ones (a granted folder may be any absolute path, and so may the workspace), the
//! SDK's stand-ins for the host. `tests/fixtures/workspace` holds a project with one
//! realistic definition in each format, as each agent's documentation writes them.

mod config;
mod formats;
mod scan;
mod task;
mod tools;

use std::path::Path;

use agent_host_sdk::testing::Harness;
use serde_json::{Value, json};

use crate::config::Config;

/// The fixtures' project, with a definition in each format's folder.
pub fn fixtures() -> String {
    format!("{}/tests/fixtures/workspace", env!("CARGO_MANIFEST_DIR"))
}

/// A folder of definitions being written.
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

    /// The path of `file` in it, as the plugin names it.
    pub fn at(&self, file: &str) -> String {
        format!("{}/{file}", self.config_path())
    }

    /// Writes `path` (relative to the folder) with `text`, making its folders.
    pub fn file(&self, path: &str, text: &str) -> &Self {
        let at = self.path().join(path);
        std::fs::create_dir_all(at.parent().expect("a file has a folder")).expect("make the folders");
        std::fs::write(at, text).expect("write the file");
        self
    }

    /// A definition of ours called `name`, described by `description`, with `extra`
    /// frontmatter lines and `body`.
    pub fn agent(&self, name: &str, description: &str, extra: &str, body: &str) -> &Self {
        self.file(
            &format!("{name}.md"),
            &format!("---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"),
        )
    }
}

/// The plugin configured with `folder` as its one folder (of our format) and `extra` keys.
pub fn harness(folder: &Folder, extra: Value) -> Harness<Config> {
    let mut config = json!({"dirs": [folder.config_path()]});
    for (key, value) in extra.as_object().expect("extra keys are an object") {
        config[key] = value.clone();
    }
    Harness::new(crate::plugin(), config).expect("the config is accepted")
}

/// The plugin reading the fixtures' project, trusted, and no folder of the operator's.
pub fn trusting_fixtures(extra: Value) -> Harness<Config> {
    let mut config = json!({"dirs": [], "trust_project": true, "workspace": fixtures()});
    for (key, value) in extra.as_object().expect("extra keys are an object") {
        config[key] = value.clone();
    }
    Harness::new(crate::plugin(), config).expect("the config is accepted")
}
