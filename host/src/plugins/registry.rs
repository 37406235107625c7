//! The plugins a deployment runs, in config order, loaded as one unit: a set is complete
//! and consistent (unique names, unique tool names, every requirement granted) or it is not
//! used at all.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::Value;

use super::loaded::{ComponentFile, LoadedPlugin, PluginSpec};
use super::origin::component_of;
use super::requirements::check_requirements;
use super::reuse::ProvideMemo;
use super::types::{CallContext, Exports};
use crate::config::{Config, ConfigError, Grants, Limits};
use crate::events::EventSink;
use crate::runtime::SandboxEngine;
use crate::state::{Session, StateBag};

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

/// One plugin of the set: the plugin, what it was loaded from, and whether this load made it.
struct Entry {
    plugin: Arc<LoadedPlugin>,
    key: LoadKey,
    /// Compiled or configured anew by this load, as opposed to reused from the previous set.
    fresh: bool,
}

/// The loaded plugins, in config order, plus what is derived from them.
pub struct PluginSet {
    entries: Vec<Entry>,
    /// The plugins alone, in config order: what the agent walks on every model call.
    plugins: Vec<Arc<LoadedPlugin>>,
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
        let mut entries: Vec<Entry> = Vec::new();
        for (index, entry) in config.plugins.iter().enumerate().filter(|(_, p)| p.enabled) {
            let at = |message: String| -> ConfigError {
                config.error_at(entry.origin_span(), format!("plugin[{index}]"), message)
            };
            let component = component_of(entry, config, sink).await.map_err(&at)?;
            let settings = serde_json::to_value(&entry.config)
                .with_context(|| format!("plugin[{index}].config cannot be expressed as JSON"))?;
            let file = ComponentFile::read(&component, &cache_dir).map_err(|error| at(error.to_string()))?;
            let key = LoadKey {
                component,
                hash: file.hash.clone(),
                settings,
                limits: entry.call_limits(config.runtime.limits),
                grants: entry.grants.clone(),
                fail_open: entry.fail_open,
            };
            let reused =
                previous.and_then(|set| set.entries.iter().find(|e| e.key == key)).map(|e| e.plugin.clone());
            let fresh = reused.is_none();
            let plugin = match reused {
                Some(plugin) => plugin,
                None => {
                    let spec = PluginSpec {
                        component: &file,
                        config: &key.settings,
                        limits: key.limits,
                        grants: &entry.grants,
                        base_dir: &config.source.dir,
                        fail_open: entry.fail_open,
                        cache_dir: &cache_dir,
                        sandbox: config.runtime.sandbox,
                    };
                    Arc::new(LoadedPlugin::load(engine, spec).await.map_err(|error| at(error.to_string()))?)
                }
            };
            if let Some(other) = entries.iter().find(|e| e.plugin.name() == plugin.name()) {
                return Err(at(format!(
                    "two plugins are named `{}`: {} and {}",
                    plugin.name(),
                    other.plugin.identity().path.display(),
                    plugin.identity().path.display()
                ))
                .into());
            }
            if plugin.implements(Exports::COMPACT)
                && let Some(other) = entries.iter().find(|e| e.plugin.implements(Exports::COMPACT))
            {
                return Err(at(format!(
                    "both {} and {} implement `compact`; one session has one compactor, so enable only one",
                    other.plugin.label(),
                    plugin.label()
                ))
                .into());
            }
            tracing::info!(plugin = %plugin.label(), cached = plugin.cache_hit(), "plugin loaded");
            entries.push(Entry { plugin, key, fresh });
        }
        let plugins: Vec<_> = entries.iter().map(|entry| entry.plugin.clone()).collect();
        check_requirements(config, &plugins)?;
        let set = Self { entries, plugins };
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
        self.entries.iter().filter(|entry| entry.fresh).map(|entry| &entry.plugin)
    }

    /// The plugins, in config order.
    pub fn plugins(&self) -> &[Arc<LoadedPlugin>] {
        &self.plugins
    }

    /// The plugins, in config order, each with the grants it was loaded under.
    pub fn with_grants(&self) -> impl Iterator<Item = (&Arc<LoadedPlugin>, &Grants)> {
        self.entries.iter().map(|entry| (&entry.plugin, &entry.key.grants))
    }

    /// The plugin that implements `compact`; at most one does.
    pub fn compactor(&self) -> Option<&Arc<LoadedPlugin>> {
        self.plugins.iter().find(|p| p.implements(Exports::COMPACT))
    }

    /// What the plugins seed new sessions with, by namespace (those that seed anything).
    pub fn seeds(&self) -> crate::state::Seeds {
        let seeding = self.plugins.iter().filter(|plugin| !plugin.seeds().is_empty());
        seeding.map(|plugin| (plugin.name().to_owned(), plugin.seeds().clone())).collect()
    }

    pub fn by_name(&self, name: &str) -> Option<&Arc<LoadedPlugin>> {
        self.plugins.iter().find(|p| p.name() == name)
    }

    /// The status texts of the plugins that give one (`status`), in config order, for a
    /// front end to show beside its prompt. A plugin whose call fails shows nothing: the
    /// failure is logged, and the prompt is no place for it.
    pub async fn status(&self, session: &Session) -> Vec<String> {
        let ctx = CallContext { session_id: session.id().to_owned(), ..CallContext::default() };
        let mut lines = Vec::new();
        for plugin in self.plugins.iter().filter(|p| p.implements(Exports::STATUS)) {
            match plugin.status(&ctx, session.bag()).await {
                Ok(Some(line)) if !line.trim().is_empty() => lines.push(line),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "status call failed"),
            }
        }
        lines
    }

    /// Every plugin's declared tools, and what `provide` offers in a scratch session made as
    /// a new session is (empty but for the seeds), so a name offered twice is caught at load,
    /// not on some later model call.
    async fn check_tool_names(&self) -> Result<(), String> {
        let scratch = StateBag::default();
        scratch.seed(&self.seeds());
        let ctx = CallContext { session_id: "load-check".into(), ..CallContext::default() };
        let mut owners: HashMap<String, String> = HashMap::new();
        for plugin in self.plugins.iter() {
            let mut names: Vec<String> =
                plugin.declared_tools().iter().map(|tool| tool.spec.name.clone()).collect();
            if plugin.implements(Exports::PROVIDE) {
                match plugin.provide(&ctx, &scratch, &ProvideMemo::default()).await {
                    Ok(output) => names.extend(output.value.tools.iter().map(|tool| tool.name.clone())),
                    // A plugin whose tools depend on state may fail here; its failures are
                    // reported on real calls.
                    Err(error) => tracing::debug!(%error, "tool-name check skipped a plugin's provide"),
                }
            }
            for name in names {
                if let Some(first) = owners.insert(name.clone(), plugin.label()) {
                    if first == plugin.label() {
                        return Err(format!(
                            "plugin {first} offers the tool `{name}` twice: it declares it from \
                             `configure` and its `provide` returns it too"
                        ));
                    }
                    return Err(format!(
                        "the tool `{name}` is offered by both {first} and {}; remove one of the plugins",
                        plugin.label()
                    ));
                }
            }
        }
        Ok(())
    }
}
