//! The plugin's logic, natively: a temporary folder stands in for the granted workspace (the
//! `workspace` setting may name any absolute path), the SDK's stand-ins for the host.

mod config;
mod plugin;
mod prompt;
mod read;
mod walk;

use std::path::Path;

use agent_host_sdk::Plugin;
use agent_host_sdk::PromptOutcome;
use agent_host_sdk::bindings::agent_host::plugin::types::CallContext;
use agent_host_sdk::testing::Harness;
use serde_json::{Value, json};

use crate::config::Config;

/// A workspace being written.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().expect("a temporary folder") }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Its path as the `workspace` setting names it.
    pub fn config_path(&self) -> String {
        self.path().to_str().expect("a UTF-8 temporary path").to_owned()
    }

    /// Where `path`, relative to the workspace, lies; an absolute one would write outside it.
    fn at(&self, path: &str) -> std::path::PathBuf {
        assert!(!path.starts_with('/'), "`{path}` is relative to the workspace");
        self.path().join(path)
    }

    /// Writes the AGENTS.md of `folder` (`""` for the root) with `text`.
    pub fn agents_md(&self, folder: &str, text: &str) -> &Self {
        self.file(&crate::scan::file_path(folder), text)
    }

    /// Writes `path` (relative to the workspace) with `text`, making its folders.
    pub fn file(&self, path: &str, text: &str) -> &Self {
        self.bytes(path, text.as_bytes())
    }

    /// Writes `path` (relative to the workspace) with `bytes`, making its folders.
    pub fn bytes(&self, path: &str, bytes: &[u8]) -> &Self {
        let at = self.at(path);
        std::fs::create_dir_all(at.parent().expect("a file has a folder")).expect("make the folders");
        std::fs::write(at, bytes).expect("write the file");
        self
    }

    /// A symbolic link at `path` (relative to the workspace) to `target`, as written.
    pub fn link(&self, path: &str, target: &str) -> &Self {
        let at = self.at(path);
        std::fs::create_dir_all(at.parent().expect("a link has a folder")).expect("make the folders");
        std::os::unix::fs::symlink(target, at).expect("make the link");
        self
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
