use std::path::PathBuf;

use crate::runtime::PluginFailure;

/// Why a call into a plugin failed: which plugin (`name@version`), and how. Callers that
/// care how branch on `kind`; the message reads `plugin <name@version> <what happened>`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("plugin {plugin}{}{kind}", kind.separator())]
pub struct PluginError {
    pub plugin: String,
    pub kind: PluginFailure,
}

impl PluginError {
    pub fn new(plugin: impl Into<String>, kind: PluginFailure) -> Self {
        Self { plugin: plugin.into(), kind }
    }

    /// The `name@version` of the plugin that failed.
    pub fn plugin(&self) -> &str {
        &self.plugin
    }
}

/// Why a plugin could not be loaded. The old version, if any, stays live.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("plugin at {path}: cannot read the component: {detail}")]
    Read { path: PathBuf, detail: String },
    #[error("plugin at {path}: not a valid component: {detail}")]
    Compile { path: PathBuf, detail: String },
    #[error("plugin at {path}: does not fit the agent-host plugin contract: {detail}")]
    Link { path: PathBuf, detail: String },
    #[error("plugin at {path}: cannot be built from source: {detail}")]
    Build { path: PathBuf, detail: String },
    #[error("plugin {plugin} (at {path}): {detail}")]
    Manifest { plugin: String, path: PathBuf, detail: String },
    #[error("plugin {plugin} is granted `process = true`, but {detail}")]
    Sandbox { plugin: String, detail: String },
    #[error("plugin {plugin} refused its configuration: {message}")]
    Configure { plugin: String, message: String },
    #[error("plugin {} failed while loading: {source}", source.plugin)]
    Call {
        #[from]
        source: PluginError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(kind: PluginFailure) -> String {
        PluginError::new("p@1.0.0", kind).to_string()
    }

    #[test]
    fn every_failure_reads_as_a_sentence_about_the_plugin() {
        assert_eq!(
            message(PluginFailure::Timeout { timeout_ms: 150 }),
            "plugin p@1.0.0 timed out after 150 ms"
        );
        assert_eq!(
            message(PluginFailure::MemoryLimit { limit_mb: 24 }),
            "plugin p@1.0.0 hit its memory limit of 24 MiB"
        );
        assert_eq!(message(PluginFailure::Panic { message: "boom".into() }), "plugin p@1.0.0 panicked: boom");
        assert_eq!(
            message(PluginFailure::Trap { detail: "unreachable".into() }),
            "plugin p@1.0.0 trapped: unreachable"
        );
        assert_eq!(
            message(PluginFailure::Malformed { detail: "not JSON".into() }),
            "plugin p@1.0.0 returned malformed output: not JSON"
        );
        assert_eq!(
            message(PluginFailure::Instantiate { detail: "no folder".into() }),
            "plugin p@1.0.0 could not be instantiated: no folder"
        );
        assert_eq!(
            message(PluginFailure::OverCap { cap: "max_events", detail: "over 3 events".into() }),
            "plugin p@1.0.0: over 3 events; nothing of the call was kept"
        );
    }

    #[test]
    fn a_failed_load_names_the_plugin_and_what_its_call_said() {
        let call = PluginError::new("p@1.0.0", PluginFailure::Timeout { timeout_ms: 5 });
        assert_eq!(
            LoadError::from(call).to_string(),
            "plugin p@1.0.0 failed while loading: plugin p@1.0.0 timed out after 5 ms"
        );
    }
}
