//! The plugin's logic, natively: a temporary folder stands in for the granted workspace (the
//! `workspace` setting may name any absolute path), the SDK's stand-ins for the host.

mod config;
mod plugin;
mod prompt;
mod read;
mod walk;

use agent_host_sdk::Plugin;
use agent_host_sdk::PromptOutcome;
use agent_host_sdk::bindings::agent_host::plugin::types::CallContext;
use agent_host_sdk::testing::Harness;
use serde_json::{Value, json};

use crate::config::Config;

/// A workspace being written; the `workspace` setting names it by its `config_path`.
pub use temp_folder::TempFolder as Workspace;

/// The files of a workspace.
pub trait AgentsMdFiles {
    /// Writes the AGENTS.md of `folder` (`""` for the root) with `text`.
    fn agents_md(&self, folder: &str, text: &str) -> &Self;
}

impl AgentsMdFiles for Workspace {
    fn agents_md(&self, folder: &str, text: &str) -> &Self {
        self.file(&crate::scan::file_path(folder), text)
    }
}

/// The configuration over `workspace`, trusted, otherwise the defaults.
pub fn config(workspace: &Workspace) -> Config {
    Config { workspace: workspace.config_path(), trust_project: true, ..Config::default() }
}

/// The plugin configured over `workspace` with `extra` keys (`trust_project` among them).
pub fn harness(workspace: &Workspace, extra: Value) -> Harness<Config> {
    let mut config = json!({"workspace": workspace.config_path()});
    for (key, value) in extra.as_object().expect("extra keys are an object") {
        config[key] = value.clone();
    }
    Harness::new(crate::plugin(), config).expect("the config is accepted")
}

fn call_context(plugin: &Harness<Config>) -> CallContext {
    CallContext {
        session_id: "test-session".to_owned(),
        config: plugin.config().to_string(),
        model_calls: 0,
        turn_iteration: 0,
    }
}

/// Runs `session-start` as the host does once per new session.
pub fn session_start(plugin: &Harness<Config>) -> Option<String> {
    let declaration: Plugin<Config> = crate::plugin();
    declaration.session_start_raw(call_context(plugin))
}

/// Runs `user-prompt-submit` as the host does at the start of every turn.
pub fn user_prompt(plugin: &Harness<Config>, prompt: &str) -> PromptOutcome {
    let declaration: Plugin<Config> = crate::plugin();
    declaration.user_prompt_submit_raw(call_context(plugin), prompt)
}
