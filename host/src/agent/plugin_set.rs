//! The plugins a deployment runs, in config order, loaded as one unit: a set is complete
//! and consistent (unique names, unique tool names) or it is not used at all.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::config::{Config, ConfigError, Grants, Limits};
use crate::events::{Event, EventSink};
use crate::runtime::plugin_spec;
use crate::runtime::{CallContext, LoadedPlugin, ProvideMemo, SandboxEngine, resolve_component};
use crate::state::StateBag;

/// A compiled JSON Schema and the schema itself, as sent to the model: compact JSON text,
/// copied into every request body as it is rather than walked value by value.
pub struct CompiledSchema {
    pub schema: Arc<RawValue>,
    pub validator: jsonschema::Validator,
}

/// What a loaded plugin was loaded from; an equal key on reload means the loaded plugin
/// can be reused as it is, with no compile, instantiate or configure.
#[derive(Debug, Clone, PartialEq)]
struct LoadKey {
    component: PathBuf,
    hash: String,
    settings: Value,
    limits: Limits,
    grants: Grants,
    fail_open: bool,
}

/// The loaded plugins, in config order, plus what is derived from them.
pub struct PluginSet {
    plugins: Vec<Arc<LoadedPlugin>>,
    keys: Vec<LoadKey>,
    /// Which plugins this load compiled or configured anew (the rest were reused).
    fresh: Vec<bool>,
    /// Schemas by their text: compiled once, whatever call offers them again. Looked up for
    /// every tool of every model call, so hashed with foldhash (SipHash over the schema
    /// texts showed in the profile).
    schemas: Mutex<foldhash::HashMap<String, Arc<CompiledSchema>>>,
}

impl PluginSet {
    /// Builds (for crate folders), loads and configures every enabled plugin of `config`.
    /// The first failure is returned as a config error that points at the plugin's entry.
    /// Plugins of `previous` whose component, settings, limits and grants are unchanged are
    /// reused as they are. A crate folder's build reports its progress to `sink`.
    pub async fn load(
        engine: &SandboxEngine,
        config: &Config,
        previous: Option<&PluginSet>,
        sink: &dyn EventSink,
    ) -> anyhow::Result<Self> {
        let cache_dir = config.resolve(&config.runtime.cache_dir);
        let mut plugins: Vec<Arc<LoadedPlugin>> = Vec::new();
        let mut keys = Vec::new();
        let mut fresh = Vec::new();
        for (index, entry) in config.plugins.iter().enumerate().filter(|(_, p)| p.enabled) {
            let at = |message: String| -> ConfigError {
                config.error_at(entry.path.span(), format!("plugin[{index}]"), message)
            };
            let path = config.resolve(entry.path.get_ref());
            let component = build(path, sink).await.map_err(&at)?;
            let settings = serde_json::to_value(&entry.config)
                .with_context(|| format!("plugin[{index}].config cannot be expressed as JSON"))?;
            let bytes = std::fs::read(&component)
                .map_err(|error| at(format!("cannot read {}: {error}", component.display())))?;
            let key = LoadKey {
                component: component.clone(),
                hash: hex::encode(Sha256::digest(&bytes)),
                settings: settings.clone(),
                limits: entry.limits.over(config.runtime.limits),
                grants: entry.grants.clone(),
                fail_open: entry.fail_open,
            };
            let reused = previous
                .and_then(|set| set.keys.iter().position(|k| *k == key).map(|i| set.plugins[i].clone()));
            let plugin = match reused {
                Some(plugin) => {
                    fresh.push(false);
                    plugin
                }
                None => {
                    let spec = plugin_spec(config, entry, &component, &cache_dir, settings);
                    fresh.push(true);
                    Arc::new(LoadedPlugin::load(engine, spec).await.map_err(|error| at(error.to_string()))?)
                }
            };
            keys.push(key);
            if let Some(other) = plugins.iter().find(|p| p.name() == plugin.name()) {
                return Err(at(format!(
                    "two plugins are named `{}`: {} and {}",
                    plugin.name(),
                    other.identity().path.display(),
                    plugin.identity().path.display()
                ))
                .into());
            }
            tracing::info!(plugin = %plugin.label(), cached = plugin.cache_hit(), "plugin loaded");
            plugins.push(plugin);
        }
        check_state_grants(config, &plugins)?;
        let set = Self { plugins, keys, fresh, schemas: Mutex::default() };
        set.check_tool_names().await.map_err(|message| ConfigError {
            file: config.source.file.clone(),
            line: None,
            field: Some("plugin".into()),
            message,
        })?;
        Ok(set)
    }

    /// The plugins this load compiled or configured anew, as opposed to reused.
    pub fn freshly_loaded(&self) -> impl Iterator<Item = &Arc<LoadedPlugin>> {
        self.plugins.iter().zip(&self.fresh).filter(|(_, fresh)| **fresh).map(|(plugin, _)| plugin)
    }

    /// The plugins, in config order.
    pub fn plugins(&self) -> &[Arc<LoadedPlugin>] {
        &self.plugins
    }

    pub fn by_name(&self, name: &str) -> Option<&Arc<LoadedPlugin>> {
        self.plugins.iter().find(|p| p.name() == name)
    }

    /// Asks every plugin for its tools in an empty scratch session, so a name offered
    /// twice is caught at load, not on some later model call.
    async fn check_tool_names(&self) -> Result<(), String> {
        let scratch = StateBag::default();
        let ctx = CallContext { session_id: "load-check".into(), ..CallContext::default() };
        let mut owners: HashMap<String, String> = HashMap::new();
        for plugin in self.plugins.iter().filter(|p| p.implements(crate::runtime::Capabilities::PROVIDE)) {
            let contribution = match plugin.provide(&ctx, &scratch, &ProvideMemo::default()).await {
                Ok(output) => output.value,
                // A plugin whose tools depend on state may fail here; its failures are
                // reported on real calls.
                Err(error) => {
                    tracing::debug!(%error, "tool-name check skipped a plugin");
                    continue;
                }
            };
            for tool in &contribution.tools {
                if let Some(first) = owners.insert(tool.name.clone(), plugin.label()) {
                    return Err(format!(
                        "the tool `{}` is offered by both {first} and {}; remove one of the plugins",
                        tool.name,
                        plugin.label()
                    ));
                }
            }
        }
        Ok(())
    }

    /// The compiled schema for `text`, compiling it on first sight.
    pub fn schema(&self, text: &str) -> Result<Arc<CompiledSchema>, String> {
        let mut schemas = self.schemas.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(compiled) = schemas.get(text) {
            return Ok(compiled.clone());
        }
        let schema: Value = serde_json::from_str(text).map_err(|error| error.to_string())?;
        let validator = jsonschema::validator_for(&schema).map_err(|error| error.to_string())?;
        let compact = RawValue::from_string(schema.to_string()).expect("a JSON value prints as JSON");
        let compiled = Arc::new(CompiledSchema { schema: Arc::from(compact), validator });
        schemas.insert(text.to_owned(), compiled.clone());
        Ok(compiled)
    }
}

/// The component for a configured plugin path: the `.wasm` itself, or a crate folder built
/// for it. A build takes seconds, not microseconds, so it runs off the async workers, and its
/// progress lines come back over a channel to be shown as `plugin_building` events.
async fn build(path: PathBuf, sink: &dyn EventSink) -> Result<PathBuf, String> {
    let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let shown = path.display().to_string();
    let build = tokio::task::spawn_blocking(move || {
        resolve_component(&path, &|line| {
            let _ = progress_tx.send(line.to_owned());
        })
    });
    // The channel closes when the build is over and drops its sender.
    while let Some(progress) = progress_rx.recv().await {
        sink.emit(&Event::PluginBuilding { path: shown.clone(), progress });
    }
    build
        .await
        .map_err(|error| format!("the build was interrupted: {error}"))?
        .map_err(|error| error.to_string())
}

/// A plugin that reads another's state must be granted it, and the other must be loaded:
/// otherwise a feature that depends on it (the todo loop reading the current mode) would
/// silently do nothing. Checked for every `read_state` grant and every `mode_plugin`
/// setting.
fn check_state_grants(config: &Config, plugins: &[Arc<LoadedPlugin>]) -> Result<(), ConfigError> {
    let loaded = |name: &str| plugins.iter().any(|p| p.name() == name);
    let enabled = config.plugins.iter().enumerate().filter(|(_, p)| p.enabled);
    for ((index, entry), plugin) in enabled.zip(plugins) {
        let at = |message: String| config.error_at(entry.path.span(), format!("plugin[{index}]"), message);
        if let Some(mode_plugin) = entry.config.get("mode_plugin").and_then(|v| v.as_str())
            && !entry.grants.read_state.iter().any(|granted| granted == mode_plugin)
        {
            return Err(at(format!(
                "{} reads the mode from `{mode_plugin}` but has no grant for it: add \
                 `read_state = [\"{mode_plugin}\"]` under its [plugin.grants]",
                plugin.label()
            )));
        }
        for namespace in &entry.grants.read_state {
            if !loaded(namespace) {
                return Err(at(format!(
                    "{} is granted to read the state of `{namespace}`, but no loaded plugin has that name",
                    plugin.label()
                )));
            }
        }
    }
    Ok(())
}
