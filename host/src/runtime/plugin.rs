use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use wasmtime::component::Component;

use super::bindings::PluginPre;
use super::bindings::types::{Capabilities, CommandSpec, ToolResult, ToolUse};
use super::cache;
use super::call::{CallState, DirMount, ProcessGrant};
use super::call_counts::CallCounts;
use super::engine::SandboxEngine;
use super::error::LoadError;
use super::export::ExportIndices;
use super::hook_filter::HookFilters;
use super::reuse::SharedContributions;
use crate::config::{Grants, Limits, SandboxMode};
use crate::recent::RecentlyUsed;
use crate::sandbox::{Rlimits, Sandbox};
use crate::state::StateBag;

mod calls;

/// Schema texts a load remembers as checked: more than any stock plugin offers at once.
const CHECKED_SCHEMAS: usize = 32;

/// Who a loaded plugin is: shown in every error, log line and `/plugins`.
#[derive(Debug)]
pub struct PluginIdentity {
    /// The manifest's name; also the plugin's state namespace.
    pub name: String,
    pub version: String,
    /// The component file it was loaded from.
    pub path: PathBuf,
    /// SHA-256 of the component's bytes.
    pub hash: String,
}

impl fmt::Display for PluginIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.name, self.version)
    }
}

/// What the host tells a plugin about the call it makes.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    pub session_id: String,
    pub model_calls: u64,
    pub turn_iteration: u32,
}

/// How to load one plugin: its component, its settings, its powers.
pub struct PluginSpec<'a> {
    pub component: &'a Path,
    pub config: serde_json::Value,
    pub limits: Limits,
    pub grants: &'a Grants,
    /// Folder that relative `grants.dirs` resolve against (the config file's).
    pub base_dir: &'a Path,
    pub fail_open: bool,
    pub cache_dir: &'a Path,
    /// How the processes of a `process = true` grant are confined.
    pub sandbox: SandboxMode,
}

/// A plugin that compiled, linked, described itself and accepted its configuration.
/// Cheap to share: calls in flight keep an `Arc` to the version they started on.
pub struct LoadedPlugin {
    identity: Arc<PluginIdentity>,
    /// Unique to this load: what a session's [`ProvideMemo`] keys contributions by, so a
    /// reloaded plugin (new code or new config) never sees its predecessor's.
    load_id: u64,
    /// Reusable contributions of this load, from any session (see [`SharedContributions`]).
    shared: SharedContributions,
    /// Tool schema texts this load's contributions offered and that passed the check.
    checked_schemas: RecentlyUsed<Arc<str>>,
    capabilities: Capabilities,
    commands: Vec<CommandSpec>,
    /// Which tool calls the tool hooks see, as `configure` declared.
    hook_filters: HookFilters,
    calls: CallCounts,
    exports: ExportIndices,
    pre: PluginPre<CallState>,
    config: String,
    limits: Limits,
    read_grants: Arc<[String]>,
    process: Option<Arc<ProcessGrant>>,
    dirs: Arc<[DirMount]>,
    fail_open: bool,
    loaded_at: SystemTime,
    cache_hit: bool,
}

impl LoadedPlugin {
    /// Compiles (or loads from the cache), links, asks for the manifest, configures.
    pub async fn load(engine: &SandboxEngine, spec: PluginSpec<'_>) -> Result<Self, LoadError> {
        let path = spec.component.to_path_buf();
        let bytes = std::fs::read(&path)
            .map_err(|error| LoadError::Read { path: path.clone(), detail: error.to_string() })?;
        let (component, hash, cache_hit): (Component, String, bool) =
            cache::component(engine.engine(), spec.cache_dir, &bytes)
                .map_err(|error| LoadError::Compile { path: path.clone(), detail: format!("{error:#}") })?;
        let instance_pre = engine
            .linker()
            .instantiate_pre(&component)
            .map_err(|error| LoadError::Link { path: path.clone(), detail: format!("{error:#}") })?;
        let exports = ExportIndices::find(&component)
            .map_err(|detail| LoadError::Link { path: path.clone(), detail })?;
        let pre = PluginPre::new(instance_pre)
            .map_err(|error| LoadError::Link { path: path.clone(), detail: format!("{error:#}") })?;
        let dirs: Vec<DirMount> = spec
            .grants
            .dirs
            .iter()
            .map(|(guest, grant)| DirMount {
                host: if grant.host.is_absolute() {
                    grant.host.clone()
                } else {
                    spec.base_dir.join(&grant.host)
                },
                guest: guest.clone(),
                write: grant.write,
            })
            .collect();
        // What a `process = true` grant needs; the grant itself is made once the plugin
        // has a name for the error a missing sandbox gives.
        let workdir = dirs.iter().find(|mount| mount.write).map(|mount| mount.host.clone());
        let folders: Vec<_> = dirs.iter().map(|mount| (mount.host.clone(), mount.write)).collect();
        let provisional = Arc::new(PluginIdentity {
            name: "(loading)".into(),
            version: "?".into(),
            path: path.clone(),
            hash: hash.clone(),
        });
        static LOADS: AtomicU64 = AtomicU64::new(0);
        let mut plugin = Self {
            identity: provisional,
            load_id: LOADS.fetch_add(1, Ordering::Relaxed),
            shared: SharedContributions::default(),
            checked_schemas: RecentlyUsed::new(CHECKED_SCHEMAS),
            capabilities: Capabilities::empty(),
            commands: Vec::new(),
            hook_filters: HookFilters::default(),
            calls: CallCounts::default(),
            exports,
            pre,
            config: "null".into(),
            limits: spec.limits,
            read_grants: spec.grants.read_state.clone().into(),
            process: None,
            dirs: dirs.into(),
            fail_open: spec.fail_open,
            loaded_at: SystemTime::now(),
            cache_hit,
        };
        let scratch = StateBag::default();
        let manifest = plugin
            .manifest(&scratch)
            .await
            .map_err(|source| LoadError::Call { plugin: path.display().to_string(), source })?
            .value;
        validate_name(&manifest.name).map_err(|detail| LoadError::Manifest {
            plugin: manifest.name.clone(),
            path: path.clone(),
            detail,
        })?;
        plugin.identity =
            Arc::new(PluginIdentity { name: manifest.name, version: manifest.version, path, hash });
        if spec.grants.process {
            // Probed once per process; never a silent fallback to an unconfined process.
            let sandbox = match spec.sandbox {
                SandboxMode::Namespaces => Sandbox::confined().map_err(|error| LoadError::Sandbox {
                    plugin: plugin.label(),
                    detail: error.to_string(),
                })?,
                SandboxMode::None => Sandbox::unconfined(),
            };
            plugin.process = Some(Arc::new(ProcessGrant {
                workdir,
                env: spec.grants.env.clone(),
                folders,
                network: spec.grants.network,
                rlimits: Rlimits {
                    cpu_secs: spec.limits.process_cpu_secs,
                    memory_mb: spec.limits.process_memory_mb,
                    max_procs: spec.limits.process_max_procs,
                    file_mb: spec.limits.process_file_mb,
                },
                sandbox,
                deadline_ms: spec.limits.timeout_ms,
                max_output_bytes: u64::from(spec.limits.max_output_kb) * 1024,
            }));
        }
        plugin.capabilities = manifest.capabilities;
        plugin.commands = manifest.commands;
        let config_text = spec.config.to_string();
        let (configured, hook_filters) = plugin
            .configure(&scratch, &config_text)
            .await
            .map_err(|source| LoadError::Call { plugin: plugin.label(), source })?;
        let configured =
            configured.value.map_err(|message| LoadError::Configure { plugin: plugin.label(), message })?;
        serde_json::from_str::<serde::de::IgnoredAny>(&configured).map_err(|error| LoadError::Manifest {
            plugin: plugin.label(),
            path: plugin.identity.path.clone(),
            detail: format!("`configure` returned text that is not JSON: {error}"),
        })?;
        plugin.config = configured;
        plugin.hook_filters = hook_filters;
        Ok(plugin)
    }

    pub fn identity(&self) -> &Arc<PluginIdentity> {
        &self.identity
    }

    pub fn name(&self) -> &str {
        &self.identity.name
    }

    /// `name@version`.
    pub fn label(&self) -> String {
        self.identity.to_string()
    }

    pub fn implements(&self, capability: Capabilities) -> bool {
        self.capabilities.contains(capability)
    }

    /// Whether the host must call `pre-tool-use` for `tool_use`: the plugin implements it
    /// and its filter lets the call through.
    pub fn sees_pre_tool_use(&self, tool_use: &ToolUse) -> bool {
        self.implements(Capabilities::PRE_TOOL_USE) && self.hook_filters.pre_tool_use_sees(tool_use)
    }

    /// Whether the host must call `post-tool-use` for `tool_use` ending in `result`.
    pub fn sees_post_tool_use(&self, tool_use: &ToolUse, result: &ToolResult) -> bool {
        self.implements(Capabilities::POST_TOOL_USE) && self.hook_filters.post_tool_use_sees(tool_use, result)
    }

    pub fn commands(&self) -> &[CommandSpec] {
        &self.commands
    }

    /// The configuration `configure` returned.
    pub fn config(&self) -> &str {
        &self.config
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    pub fn fail_open(&self) -> bool {
        self.fail_open
    }

    pub fn loaded_at(&self) -> SystemTime {
        self.loaded_at
    }

    /// How many times each export was called since load.
    pub fn calls(&self) -> &CallCounts {
        &self.calls
    }

    /// Drops the contributions this load keeps for any session, so the next `provide` of a
    /// session without its own runs the plugin (benchmarks of real calls).
    pub fn forget_shared_contributions(&self) {
        self.shared.clear();
    }

    /// Whether the compiled component came from the disk cache.
    pub fn cache_hit(&self) -> bool {
        self.cache_hit
    }
}

fn validate_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if valid {
        Ok(())
    } else {
        Err(format!("the manifest name `{name}` must be 1-64 characters of a-z, 0-9, `-` and `_`"))
    }
}

/// The [`PluginSpec`] for a config entry whose component is at `component`.
pub fn plugin_spec<'a>(
    config: &'a crate::config::Config,
    entry: &'a crate::config::PluginConfig,
    component: &'a Path,
    cache_dir: &'a Path,
    settings: serde_json::Value,
) -> PluginSpec<'a> {
    PluginSpec {
        component,
        config: settings,
        limits: entry.limits.over(config.runtime.limits),
        grants: &entry.grants,
        base_dir: &config.source.dir,
        fail_open: entry.fail_open,
        cache_dir,
        sandbox: config.runtime.sandbox,
    }
}
