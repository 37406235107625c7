//! The plugin's logic, natively: real folders in a temporary directory stand in for the
//! granted ones (a user folder may be any absolute path), the SDK's stand-ins for the host.

mod confine;
mod plugin;
mod prompt;
mod rules;
mod scan;

use agent_host_sdk::testing::Harness;
use serde_json::{Value, json};

use crate::config::Config;

/// A folder of skills being written.
pub use temp_folder::TempFolder as Folder;

/// The files of a folder of skills.
pub trait SkillFiles {
    /// Writes `folder/SKILL.md` with `text`.
    fn skill_md(&self, folder: &str, text: &str) -> &Self;

    /// A valid skill `name` whose description is `description` and body `body`.
    fn skill(&self, name: &str, description: &str, body: &str) -> &Self;
}

impl SkillFiles for Folder {
    fn skill_md(&self, folder: &str, text: &str) -> &Self {
        self.file(&format!("{folder}/SKILL.md"), text)
    }

    fn skill(&self, name: &str, description: &str, body: &str) -> &Self {
        self.skill_md(name, &format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n"))
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
