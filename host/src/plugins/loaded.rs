//! A loaded plugin: compiled, linked against its contract line, described by its manifest,
//! configured. Built in one go from what the load found (see [`LoadedPlugin::load`]); a
//! plugin that fails any step is a [`LoadError`] and never exists half-made.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use super::call_counts::CallCounts;
use super::contract::{GuestPre, Line, STOP_REUSABLE_SINCE};
use super::declared_tools::{self, DeclaredTool};
use super::error::LoadError;
use super::export::{ExportIndices, Interface};
use super::hook_filter::HookFilters;
use super::reuse::{SharedContributions, SharedStops, SharedViews};
use super::schema::SchemaCache;
use super::types::{CommandSpec, CompactorSpec, Exports, Manifest, Requirement, ToolUse};
use crate::config::{Grants, Limits, SandboxMode};
use crate::runtime::host_api::ModelBudget;
use crate::runtime::{CallingPlugin, DirMount, ProcessGrant, SandboxEngine, cache};
use crate::sandbox::{Rlimits, Sandbox};
use crate::state::StateBag;
use crate::tools::ToolResult;

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

/// A component file and its hash; its bytes, read when they were needed for the hash or
/// when the component has to be compiled (see [`cache::identify`]).
pub struct ComponentFile {
    pub path: PathBuf,
    pub hash: String,
    bytes: OnceLock<Vec<u8>>,
}

impl ComponentFile {
    pub fn read(path: &Path, cache_dir: &Path) -> Result<Self, LoadError> {
        let identified = cache::identify(path, cache_dir).map_err(|error| read_error(path, &error))?;
        let bytes = identified.bytes.map(OnceLock::from).unwrap_or_default();
        Ok(Self { path: path.to_path_buf(), hash: identified.hash, bytes })
    }

    /// The component's bytes, which are those its hash was taken of.
    pub fn bytes(&self) -> Result<&[u8], LoadError> {
        if let Some(bytes) = self.bytes.get() {
            return Ok(bytes);
        }
        let read = std::fs::read(&self.path).map_err(|error| read_error(&self.path, &error))?;
        if cache::component_hash(&read) != self.hash {
            let detail = "it changed while it was being loaded; load it again".to_owned();
            return Err(LoadError::Read { path: self.path.clone(), detail });
        }
        Ok(self.bytes.get_or_init(|| read))
    }
}

fn read_error(path: &Path, error: &std::io::Error) -> LoadError {
    LoadError::Read { path: path.to_path_buf(), detail: error.to_string() }
}

/// How to load one plugin: its component, its settings, its bounds.
pub struct PluginSpec<'a> {
    pub component: &'a ComponentFile,
    pub config: &'a serde_json::Value,
    /// The plugin's limits, over the runtime's.
    pub limits: Limits,
    pub grants: &'a Grants,
    /// Folder that relative `grants.dirs` resolve against (the config file's).
    pub base_dir: &'a Path,
    pub fail_open: bool,
    pub cache_dir: &'a Path,
    /// How the processes of a `process = true` grant are confined.
    pub sandbox: SandboxMode,
}

/// A component linked against its contract line: what calls it, whoever it turns out to be.
pub(super) struct Linked {
    pub(super) guest: GuestPre,
    pub(super) exports: ExportIndices,
    pub(super) calls: CallCounts,
}

/// The bounds every call of one plugin runs within: who it is (its state namespace), its
/// limits and its grants.
pub(super) struct PluginBounds {
    pub(super) caller: Arc<CallingPlugin>,
    pub(super) limits: Limits,
    pub(super) read_grants: Arc<[String]>,
    pub(super) process: Option<Arc<ProcessGrant>>,
    /// The budgets of a `model = true` grant; `None` without one.
    pub(super) model: Option<ModelBudget>,
    /// Whether it holds `agents = true`.
    pub(super) agents: bool,
    pub(super) dirs: Arc<[DirMount]>,
}

/// A plugin that compiled, linked, described itself and accepted its configuration.
/// Cheap to share: calls in flight keep an `Arc` to the version they started on.
pub struct LoadedPlugin {
    identity: Arc<PluginIdentity>,
    /// Unique to this load: what a session's `ProvideMemo` keys contributions by, so a
    /// reloaded plugin (new code or new config) never sees its predecessor's.
    pub(super) load_id: u64,
    /// Reusable contributions of this load, from any session (see [`SharedContributions`]).
    pub(super) shared: SharedContributions,
    /// Reusable views of this load, from any session (see [`SharedViews`]).
    pub(super) shared_views: SharedViews,
    /// Reusable `stop` outcomes of this load, from any session (see [`SharedStops`]); only
    /// when the plugin is built against a contract that lets `stop` be reused.
    pub(super) shared_stops: Option<SharedStops>,
    /// The tool schemas this load's contributions offered, checked and compiled.
    pub(super) schemas: SchemaCache,
    /// The manifest's capabilities, and the `compactor` export's hooks (contract 0.2.3).
    capabilities: Exports,
    /// See [`Self::seeds`].
    seeds: BTreeMap<String, String>,
    /// The share of a request's room past which it asks to compact, when it compacts.
    compact_trigger: Option<u8>,
    commands: Vec<CommandSpec>,
    /// What its configuration requires of the host (contract 0.2; none before).
    requires: Vec<Requirement>,
    /// Which tool calls the tool hooks see, as `configure` declared.
    hook_filters: HookFilters,
    /// The tools `configure` declared, offered on every model call (contract 0.2.1).
    declared_tools: Vec<DeclaredTool>,
    pub(super) linked: Linked,
    pub(super) bounds: PluginBounds,
    /// The configuration `configure` returned, as every call receives it.
    pub(super) config: String,
    fail_open: bool,
    loaded_at: SystemTime,
    cache_hit: bool,
}

impl LoadedPlugin {
    /// Compiles (or loads from the cache), links against the component's contract line,
    /// asks for the manifest, configures.
    pub async fn load(engine: &SandboxEngine, spec: PluginSpec<'_>) -> Result<Self, LoadError> {
        let file = spec.component;
        let path = &file.path;
        let link_error = |detail: String| LoadError::Link { path: path.clone(), detail };
        let bytes = || file.bytes().map_err(anyhow::Error::from);
        let (component, cache_hit) = cache::component(engine.engine(), spec.cache_dir, &file.hash, bytes)
            .map_err(|error| LoadError::Compile { path: path.clone(), detail: format!("{error:#}") })?;
        let (line, guest_interface) = Line::of(&component, engine.engine()).map_err(link_error)?;
        let instance_pre =
            engine.linker().instantiate_pre(&component).map_err(|error| link_error(format!("{error:#}")))?;
        let optional = line.optional_interfaces(&component, engine.engine());
        let exports =
            ExportIndices::find(&component, line, &guest_interface, &optional).map_err(link_error)?;
        let exports_interface = |wanted| optional.iter().any(|(interface, _)| *interface == wanted);
        let guest = GuestPre::new(line, instance_pre).map_err(|error| link_error(format!("{error:#}")))?;
        let linked = Linked { guest, exports, calls: CallCounts::default() };
        let dirs = granted_dirs(spec.grants, spec.base_dir);
        let scratch = StateBag::default();

        // Until the manifest names it, the plugin is the file it came from.
        let shown = path.display().to_string();
        let unnamed = PluginBounds {
            caller: Arc::new(CallingPlugin { name: shown.clone(), label: shown.clone() }),
            limits: spec.limits,
            read_grants: Arc::from([]),
            process: None,
            model: None,
            agents: false,
            dirs: dirs.clone(),
        };
        let manifest: Manifest = linked.manifest(&unnamed, &scratch).await?.value;
        validate_name(&manifest.name).map_err(|detail| LoadError::Manifest {
            plugin: manifest.name.clone(),
            path: path.clone(),
            detail,
        })?;
        let identity = Arc::new(PluginIdentity {
            name: manifest.name,
            version: manifest.version,
            path: path.clone(),
            hash: file.hash.clone(),
        });
        let label = identity.to_string();
        let bounds = PluginBounds {
            caller: Arc::new(CallingPlugin { name: identity.name.clone(), label: label.clone() }),
            limits: spec.limits,
            read_grants: spec.grants.read_state.clone().into(),
            process: process_grant(&spec, &dirs, &label)?.map(Arc::new),
            model: spec.grants.model.then_some(ModelBudget {
                tokens_per_call: spec.grants.model_tokens_per_call,
                tokens_per_session: spec.grants.model_tokens_per_session,
            }),
            agents: spec.grants.agents,
            dirs,
        };
        let (configured, declared) = linked.configure(&bounds, &scratch, &spec.config.to_string()).await?;
        let configured =
            configured.value.map_err(|message| LoadError::Configure { plugin: label.clone(), message })?;
        let seeds = scratch.namespace(&identity.name);
        let manifest_error =
            |detail: String| LoadError::Manifest { plugin: label.clone(), path: path.clone(), detail };
        serde_json::from_str::<serde::de::IgnoredAny>(&configured.config).map_err(|error| {
            manifest_error(format!("`configure` returned text that is not JSON: {error}"))
        })?;
        let schemas = SchemaCache::default();
        let declared_tools = declared_tools::check(declared.tools, &schemas).map_err(manifest_error)?;
        if !declared_tools.is_empty() && !manifest.capabilities.contains(Exports::CALL_TOOL) {
            return Err(manifest_error(
                "declares tools but its manifest does not announce `call-tool`, so none could run".into(),
            ));
        }
        let compactor = match exports_interface(Interface::Compactor) {
            true => linked.compactor_spec(&bounds, &scratch, &configured.config).await?.value,
            false => CompactorSpec::default(),
        };
        let shows_view = exports_interface(Interface::Viewer)
            && linked.viewer_shows(&bounds, &scratch, &configured.config).await?;
        let judges = match exports_interface(Interface::Judge) {
            true => linked.judge_spec(&bounds, &scratch, &configured.config).await?,
            false => Exports::empty(),
        };
        if compactor.trigger_percent.is_some() && !compactor.hooks.contains(Exports::COMPACT) {
            return Err(manifest_error("gives a compaction trigger but does not implement `compact`".into()));
        }
        static LOADS: AtomicU64 = AtomicU64::new(0);
        Ok(Self {
            identity,
            load_id: LOADS.fetch_add(1, Ordering::Relaxed),
            shared: SharedContributions::default(),
            shared_views: SharedViews::default(),
            shared_stops: Line::guest_since(&guest_interface, STOP_REUSABLE_SINCE).then(SharedStops::default),
            schemas,
            capabilities: manifest.capabilities
                | compactor.hooks
                | if shows_view { Exports::VIEW } else { Exports::empty() }
                | judges,
            seeds,
            compact_trigger: compactor.trigger_percent,
            commands: manifest.commands,
            requires: configured.requires,
            hook_filters: HookFilters::from_declarations(declared.hook_filters),
            declared_tools,
            linked,
            bounds,
            config: configured.config,
            fail_open: spec.fail_open,
            loaded_at: SystemTime::now(),
            cache_hit,
        })
    }

    /// What `configure` wrote to the plugin's namespace: what every session created while
    /// this load serves starts with (contract 0.2.10).
    pub fn seeds(&self) -> &BTreeMap<String, String> {
        &self.seeds
    }

    pub fn identity(&self) -> &Arc<PluginIdentity> {
        &self.identity
    }

    pub fn name(&self) -> &str {
        &self.identity.name
    }

    /// `name@version`.
    pub fn label(&self) -> String {
        self.bounds.caller.label.clone()
    }

    /// The contract version line the component was built against, e.g. `0.1`.
    pub fn contract(&self) -> &'static str {
        match self.linked.guest.line() {
            Line::V0_1 => "0.1",
            Line::V0_2 => "0.2",
        }
    }

    /// Unique to this load (see the field): a reloaded plugin is another load.
    pub fn load_id(&self) -> u64 {
        self.load_id
    }

    /// The state namespaces what it shows may be read from: its own, and those it is
    /// granted to read (`read_state`).
    pub fn namespaces_read(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name()).chain(self.bounds.read_grants.iter().map(String::as_str))
    }

    /// The revision in `bag` of each namespace it may read, in [`Self::namespaces_read`]'s
    /// order: what a view it showed was read from.
    pub fn revisions_read<'a>(&'a self, bag: &'a StateBag) -> impl Iterator<Item = u64> + 'a {
        self.namespaces_read().map(|namespace| bag.revision(namespace))
    }

    pub fn implements(&self, capability: Exports) -> bool {
        self.capabilities.contains(capability)
    }

    /// For a plugin that implements `compact`: the share of a request's room, in percent,
    /// past which it asks to be called (none: the host's `[compaction] trigger_percent`).
    pub fn compact_trigger(&self) -> Option<u8> {
        self.compact_trigger
    }

    /// What its configuration requires of the host.
    pub fn requires(&self) -> &[Requirement] {
        &self.requires
    }

    /// Whether the host must call `pre-tool-use` for `tool_use`: the plugin implements it
    /// and its filter lets the call through.
    pub fn sees_pre_tool_use(&self, tool_use: &ToolUse) -> bool {
        self.implements(Exports::PRE_TOOL_USE) && self.hook_filters.pre_tool_use_sees(tool_use)
    }

    /// Whether the host must call `post-tool-use` for `tool_use` ending in `result`.
    pub fn sees_post_tool_use(&self, tool_use: &ToolUse, result: &ToolResult) -> bool {
        self.implements(Exports::POST_TOOL_USE) && self.hook_filters.post_tool_use_sees(tool_use, result)
    }

    /// The tools `configure` declared, in the order declared.
    pub fn declared_tools(&self) -> &[DeclaredTool] {
        &self.declared_tools
    }

    pub fn commands(&self) -> &[CommandSpec] {
        &self.commands
    }

    /// The configuration `configure` returned.
    pub fn config(&self) -> &str {
        &self.config
    }

    pub fn fail_open(&self) -> bool {
        self.fail_open
    }

    pub fn loaded_at(&self) -> SystemTime {
        self.loaded_at
    }

    /// How many times each export was called since load.
    pub fn calls(&self) -> &CallCounts {
        &self.linked.calls
    }

    /// Drops the contributions, views and stop outcomes this load keeps for any session, so
    /// the next `provide` of a session without its own, the next view and the next `stop` run
    /// the plugin (benchmarks of real calls).
    pub fn forget_shared_contributions(&self) {
        self.shared.clear();
        self.shared_views.clear();
        if let Some(stops) = &self.shared_stops {
            stops.clear();
        }
    }

    /// Whether the compiled component came from the disk cache.
    pub fn cache_hit(&self) -> bool {
        self.cache_hit
    }

    /// The `plugin_loaded` event that tells front ends this version serves.
    pub fn loaded_event(&self) -> crate::events::Event {
        crate::events::Event::PluginLoaded {
            plugin: self.label(),
            path: self.identity().path.display().to_string(),
            hash: self.identity().hash.clone(),
            cached: self.cache_hit,
        }
    }
}

/// The granted folders: canonical since the config was loaded (a relative one, from grants
/// not read from a config file, against `base_dir`).
fn granted_dirs(grants: &Grants, base_dir: &Path) -> Arc<[DirMount]> {
    grants
        .dirs
        .iter()
        .map(|(guest, grant)| DirMount {
            host: if grant.host.is_absolute() { grant.host.clone() } else { base_dir.join(&grant.host) },
            guest: guest.clone(),
            write: grant.write,
        })
        .collect()
}

/// What a `process = true` grant lets the plugin (`label`) run, and how it is confined;
/// `None` without the grant.
fn process_grant(
    spec: &PluginSpec<'_>,
    dirs: &[DirMount],
    label: &str,
) -> Result<Option<ProcessGrant>, LoadError> {
    if !spec.grants.process {
        return Ok(None);
    }
    // Probed once per process; never a silent fallback to an unconfined process.
    let sandbox = Sandbox::for_mode(spec.sandbox)
        .map_err(|error| LoadError::Sandbox { plugin: label.to_owned(), detail: error.to_string() })?;
    let limits = spec.limits;
    Ok(Some(ProcessGrant {
        workdir: dirs.iter().find(|mount| mount.write).map(|mount| mount.host.clone()),
        env: spec.grants.env.clone(),
        folders: dirs.iter().map(|mount| (mount.host.clone(), mount.write)).collect(),
        network: spec.grants.network,
        rlimits: Rlimits {
            cpu_secs: limits.process_cpu_secs,
            memory_mb: limits.process_memory_mb,
            max_procs: limits.process_max_procs,
            file_mb: limits.process_file_mb,
        },
        sandbox,
        max_output_bytes: limits.max_output_bytes() as u64,
    }))
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
