//! The plugin's logic, natively: real folders in a temporary directory stand in for the
//! granted ones (a granted folder may be any absolute path, and so may the workspace), the
//! SDK's stand-ins for the host. `tests/fixtures/workspace` holds a project with one
//! realistic definition in each format, as each agent's documentation writes them.

mod config;
mod formats;
mod scan;
mod task;
mod tools;

use agent_host_sdk::testing::Harness;
use serde_json::{Value, json};

use crate::config::Config;

/// The fixtures' project, with a definition in each format's folder.
pub fn fixtures() -> String {
    format!("{}/tests/fixtures/workspace", env!("CARGO_MANIFEST_DIR"))
}

/// A folder of definitions being written.
pub use temp_folder::TempFolder as Folder;

/// The files of a folder of definitions.
pub trait AgentFiles {
    /// A definition of ours called `name`, described by `description`, with `extra`
    /// frontmatter lines and `body`.
    fn agent(&self, name: &str, description: &str, extra: &str, body: &str) -> &Self;
}

impl AgentFiles for Folder {
    fn agent(&self, name: &str, description: &str, extra: &str, body: &str) -> &Self {
        self.file(
            &format!("{name}.md"),
            &format!("---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"),
        )
    }
}

/// The plugin configured with `folder` as its one folder (of our format) and `extra` keys.
pub fn harness(folder: &Folder, extra: Value) -> Harness<Config> {
    configured(json!({"dirs": [folder.config_path()]}), extra)
}

/// The plugin reading the fixtures' project, trusted, and no folder of the operator's.
pub fn trusting_fixtures(extra: Value) -> Harness<Config> {
    configured(json!({"dirs": [], "trust_project": true, "workspace": fixtures()}), extra)
}

/// The plugin configured with `config` and `extra` keys over it.
fn configured(mut config: Value, extra: Value) -> Harness<Config> {
    for (key, value) in extra.as_object().expect("extra keys are an object") {
        config[key] = value.clone();
    }
    Harness::new(crate::plugin(), config).expect("the config is accepted")
}
