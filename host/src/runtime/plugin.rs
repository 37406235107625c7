use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use wasmtime::component::Component;
use wasmtime::{Store, Trap};
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use super::bindings::types::{self, Capabilities, CommandSpec};
use super::bindings::{Plugin as PluginBindings, PluginPre};
use super::call::{CallOutput, CallState, ProcessGrant};
use super::engine::SandboxEngine;
use super::error::{LoadError, PluginError};
use super::limiter::MemoryCap;
use super::reuse::ProvideMemo;
use super::{cache, outputs::Checked};
use crate::config::{Grants, Limits};
use crate::state::StateBag;

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
}

/// A preopened folder, resolved.
#[derive(Debug, Clone)]
struct DirMount {
    host: PathBuf,
    guest: String,
    write: bool,
}

/// A plugin that compiled, linked, described itself and accepted its configuration.
/// Cheap to share: calls in flight keep an `Arc` to the version they started on.
pub struct LoadedPlugin {
    identity: Arc<PluginIdentity>,
    /// Unique to this load: what a session's [`ProvideMemo`] keys contributions by, so a
    /// reloaded plugin (new code or new config) never sees its predecessor's.
    load_id: u64,
    capabilities: Capabilities,
    commands: Vec<CommandSpec>,
    pre: PluginPre<CallState>,
    config: String,
    limits: Limits,
    read_grants: Arc<[String]>,
    process: Option<Arc<ProcessGrant>>,
    dirs: Vec<DirMount>,
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
        let process = spec.grants.process.then(|| {
            Arc::new(ProcessGrant {
                workdir: dirs.iter().find(|mount| mount.write).map(|mount| mount.host.clone()),
                env: spec.grants.env.clone(),
            })
        });
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
            capabilities: Capabilities::empty(),
            commands: Vec::new(),
            pre,
            config: "null".into(),
            limits: spec.limits,
            read_grants: spec.grants.read_state.clone().into(),
            process,
            dirs,
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
        plugin.capabilities = manifest.capabilities;
        plugin.commands = manifest.commands;
        let config_text = spec.config.to_string();
        let configured = plugin
            .configure(&scratch, &config_text)
            .await
            .map_err(|source| LoadError::Call { plugin: plugin.label(), source })?
            .value
            .map_err(|message| LoadError::Configure { plugin: plugin.label(), message })?;
        serde_json::from_str::<serde::de::IgnoredAny>(&configured).map_err(|error| LoadError::Manifest {
            plugin: plugin.label(),
            path: plugin.identity.path.clone(),
            detail: format!("`configure` returned text that is not JSON: {error}"),
        })?;
        plugin.config = configured;
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

    /// Whether the compiled component came from the disk cache.
    pub fn cache_hit(&self) -> bool {
        self.cache_hit
    }

    async fn manifest(&self, bag: &StateBag) -> Result<CallOutput<types::PluginManifest>, PluginError> {
        let (mut store, instance) = self.instantiate(bag).await?;
        let result = instance.agent_host_plugin_guest().call_manifest(&mut store).await;
        self.finish(store, result, bag)
    }

    async fn configure(
        &self,
        bag: &StateBag,
        config: &str,
    ) -> Result<CallOutput<Result<String, String>>, PluginError> {
        let (mut store, instance) = self.instantiate(bag).await?;
        let result = instance.agent_host_plugin_guest().call_configure(&mut store, &config.to_owned()).await;
        self.finish(store, result, bag)
    }

    /// `provide`, or the contribution `memo` kept from an earlier call that declared itself
    /// reusable, when every state value that call read is unchanged in `bag`.
    pub async fn provide(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        memo: &ProvideMemo,
    ) -> Result<CallOutput<types::Contribution>, PluginError> {
        if let Some(value) = memo.reuse(self.load_id, bag) {
            return Ok(CallOutput { value, events: Vec::new() });
        }
        let ctx = self.context(ctx);
        let (output, reads) = {
            let (mut store, instance) = self.instantiate(bag).await?;
            store.data_mut().reads = Some(Vec::new());
            let result = instance.agent_host_plugin_guest().call_provide(&mut store, &ctx).await;
            self.settle(store, result, bag)
        }?;
        let output = self.checked(output)?;
        memo.keep(self.load_id, reads.map(|reads| (reads, &output.value)));
        Ok(output)
    }

    pub async fn call_tool(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        call: &types::ToolCall,
    ) -> Result<CallOutput<Result<String, String>>, PluginError> {
        let ctx = self.context(ctx);
        let output = {
            let (mut store, instance) = self.instantiate(bag).await?;
            let result = instance.agent_host_plugin_guest().call_call_tool(&mut store, &ctx, call).await;
            self.finish(store, result, bag)
        }?;
        self.checked(output)
    }

    pub async fn session_start(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
    ) -> Result<CallOutput<Option<String>>, PluginError> {
        let ctx = self.context(ctx);
        let output = {
            let (mut store, instance) = self.instantiate(bag).await?;
            let result = instance.agent_host_plugin_guest().call_session_start(&mut store, &ctx).await;
            self.finish(store, result, bag)
        }?;
        self.checked(output)
    }

    pub async fn user_prompt_submit(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        prompt: &str,
    ) -> Result<CallOutput<types::PromptOutcome>, PluginError> {
        let ctx = self.context(ctx);
        let output = {
            let (mut store, instance) = self.instantiate(bag).await?;
            let result =
                instance.agent_host_plugin_guest().call_user_prompt_submit(&mut store, &ctx, prompt).await;
            self.finish(store, result, bag)
        }?;
        self.checked(output)
    }

    pub async fn pre_tool_use(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        tool_use: &types::ToolUse,
    ) -> Result<CallOutput<types::PreToolOutcome>, PluginError> {
        let ctx = self.context(ctx);
        let output = {
            let (mut store, instance) = self.instantiate(bag).await?;
            let result =
                instance.agent_host_plugin_guest().call_pre_tool_use(&mut store, &ctx, tool_use).await;
            self.finish(store, result, bag)
        }?;
        self.checked(output)
    }

    pub async fn post_tool_use(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        tool_use: &types::ToolUse,
        result: &types::ToolResult,
    ) -> Result<CallOutput<types::PostToolOutcome>, PluginError> {
        let ctx = self.context(ctx);
        let output = {
            let (mut store, instance) = self.instantiate(bag).await?;
            let result = instance
                .agent_host_plugin_guest()
                .call_post_tool_use(&mut store, &ctx, tool_use, result)
                .await;
            self.finish(store, result, bag)
        }?;
        self.checked(output)
    }

    pub async fn stop(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        reply: &str,
    ) -> Result<CallOutput<types::StopOutcome>, PluginError> {
        let ctx = self.context(ctx);
        let output = {
            let (mut store, instance) = self.instantiate(bag).await?;
            let result = instance.agent_host_plugin_guest().call_stop(&mut store, &ctx, reply).await;
            self.finish(store, result, bag)
        }?;
        self.checked(output)
    }

    pub async fn command(
        &self,
        ctx: &CallContext,
        bag: &StateBag,
        name: &str,
        args: &str,
    ) -> Result<CallOutput<Result<String, String>>, PluginError> {
        let ctx = self.context(ctx);
        let output = {
            let (mut store, instance) = self.instantiate(bag).await?;
            let result = instance.agent_host_plugin_guest().call_command(&mut store, &ctx, name, args).await;
            self.finish(store, result, bag)
        }?;
        self.checked(output)
    }

    fn context(&self, ctx: &CallContext) -> types::CallContext {
        types::CallContext {
            session_id: ctx.session_id.clone(),
            config: self.config.clone(),
            model_calls: ctx.model_calls,
            turn_iteration: ctx.turn_iteration,
        }
    }

    /// Caps and checks what a call returned; see [`Checked`].
    fn checked<R: Checked>(&self, mut output: CallOutput<R>) -> Result<CallOutput<R>, PluginError> {
        let max_bytes = self.limits.max_output_kb as usize * 1024;
        output
            .value
            .check(max_bytes)
            .map_err(|detail| PluginError::Malformed { plugin: self.label(), detail })?;
        Ok(output)
    }

    /// A fresh store and instance for one call, with the call's limits armed.
    async fn instantiate(&self, bag: &StateBag) -> Result<(Store<CallState>, PluginBindings), PluginError> {
        let mut wasi = WasiCtxBuilder::new();
        for mount in &self.dirs {
            let perms = if mount.write { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
            wasi.preopened_dir(&mount.host, &mount.guest, perms).map_err(|error| {
                PluginError::Instantiate {
                    plugin: self.label(),
                    detail: format!("cannot open granted folder {}: {error}", mount.host.display()),
                }
            })?;
        }
        let memory = MemoryCap::new(self.limits.memory_mb as usize * 1024 * 1024);
        let state = CallState::new(
            self.identity.clone(),
            bag.clone(),
            self.read_grants.clone(),
            self.process.clone(),
            memory,
            &mut wasi,
        );
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|state| &mut state.memory);
        store.set_epoch_deadline(SandboxEngine::deadline_ticks(&self.limits));
        store.epoch_deadline_trap();
        let instance = self.pre.instantiate_async(&mut store).await.map_err(|error| {
            PluginError::Instantiate { plugin: self.label(), detail: format!("{error:#}") }
        })?;
        Ok((store, instance))
    }

    /// Ends a call: classifies a failure, or applies the state writes (only if the value
    /// says the call succeeded, see [`Checked::commits`]) and hands back the events.
    fn finish<R: Checked>(
        &self,
        store: Store<CallState>,
        result: wasmtime::Result<R>,
        bag: &StateBag,
    ) -> Result<CallOutput<R>, PluginError> {
        self.settle(store, result, bag).map(|(output, _)| output)
    }

    /// [`Self::finish`], also handing back what the call read when it declared its result
    /// reusable (see [`CallState::take_reuse`]).
    fn settle<R: Checked>(
        &self,
        store: Store<CallState>,
        result: wasmtime::Result<R>,
        bag: &StateBag,
    ) -> Result<(CallOutput<R>, Option<Vec<super::reuse::StateRead>>), PluginError> {
        let value = result.map_err(|error| self.classify(&store, error))?;
        let mut state = store.into_data();
        let reads = state.take_reuse();
        if value.commits() {
            bag.apply(&self.identity.name, state.writes);
        }
        Ok((CallOutput { value, events: state.events }, reads))
    }

    fn classify(&self, store: &Store<CallState>, error: wasmtime::Error) -> PluginError {
        let plugin = self.label();
        let state = store.data();
        if state.memory.hit() {
            return PluginError::MemoryLimit { plugin, limit_mb: (state.memory.max_bytes() >> 20) as u32 };
        }
        let stderr = state.stderr_text();
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => PluginError::Timeout { plugin, timeout_ms: self.limits.timeout_ms },
            Some(trap) => match panic_message(&stderr) {
                Some(message) => PluginError::Panic { plugin, message },
                None if stderr.is_empty() => PluginError::Trap { plugin, detail: trap.to_string() },
                None => PluginError::Trap { plugin, detail: format!("{trap} (stderr: {stderr})") },
            },
            // Not a trap: the call returned, but its result could not be read (invalid
            // UTF-8, out-of-bounds pointers) — the plugin broke the contract.
            None => PluginError::Malformed { plugin, detail: format!("{error:#}") },
        }
    }
}

/// The message of a Rust panic, as the guest's std printed it to stderr.
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.find("panicked at ")?;
    let rest = &stderr[start..];
    // "panicked at src/lib.rs:12:5:\nthe message\nnote: run with ..."
    let message = rest.split_once('\n').map(|(_, message)| message).unwrap_or(rest);
    let message = message.split("\nnote:").next().unwrap_or(message).trim();
    Some(if message.is_empty() { rest.trim().to_owned() } else { message.to_owned() })
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
    }
}
