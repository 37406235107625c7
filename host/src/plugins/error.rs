use std::path::PathBuf;

/// Why a call into a plugin failed. Every variant names the plugin (`name@version`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum PluginError {
    #[error("plugin {plugin} timed out after {timeout_ms} ms")]
    Timeout { plugin: String, timeout_ms: u64 },
    #[error("plugin {plugin} hit its memory limit of {limit_mb} MiB")]
    MemoryLimit { plugin: String, limit_mb: u32 },
    #[error("plugin {plugin} panicked: {message}")]
    Panic { plugin: String, message: String },
    #[error("plugin {plugin} trapped: {detail}")]
    Trap { plugin: String, detail: String },
    #[error("plugin {plugin} returned malformed output: {detail}")]
    Malformed { plugin: String, detail: String },
    #[error("plugin {plugin} could not be instantiated: {detail}")]
    Instantiate { plugin: String, detail: String },
    /// A host-side cap (`[runtime.limits]`): `detail` names it and its config key.
    #[error("plugin {plugin}: {detail}; nothing of the call was kept")]
    OverCap { plugin: String, cap: &'static str, detail: String },
}

impl PluginError {
    /// The `name@version` of the plugin that failed.
    pub fn plugin(&self) -> &str {
        match self {
            Self::Timeout { plugin, .. }
            | Self::MemoryLimit { plugin, .. }
            | Self::Panic { plugin, .. }
            | Self::Trap { plugin, .. }
            | Self::Malformed { plugin, .. }
            | Self::Instantiate { plugin, .. }
            | Self::OverCap { plugin, .. } => plugin,
        }
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
    #[error("plugin {plugin} failed while loading: {source}")]
    Call {
        plugin: String,
        #[source]
        source: PluginError,
    },
}
