use std::sync::{Arc, RwLock};

use anyhow::Context as _;

use super::PluginSet;
use crate::config::Config;
use crate::model::ModelClient;
use crate::runtime::SandboxEngine;
use crate::state::{SessionStore, Sessions, SqliteStore};

/// Everything a running deployment needs: the engine, the current plugin set, the
/// sessions and the model. Shared by every session (`Arc<Host>`).
pub struct Host {
    config: Arc<Config>,
    engine: SandboxEngine,
    plugins: RwLock<Arc<PluginSet>>,
    sessions: Sessions,
    model: ModelClient,
}

impl Host {
    /// Loads the plugins and opens the configured SQLite store.
    pub async fn new(config: Config, model: ModelClient) -> anyhow::Result<Self> {
        let path = config.resolve(&config.storage.path);
        let store = SqliteStore::open(&path)?;
        Self::with_store(config, model, Arc::new(store)).await
    }

    /// Like [`Host::new`] with another session store.
    pub async fn with_store(
        config: Config,
        model: ModelClient,
        store: Arc<dyn SessionStore>,
    ) -> anyhow::Result<Self> {
        let engine = SandboxEngine::new().context("cannot start the plugin runtime")?;
        let plugins = PluginSet::load(&engine, &config).await?;
        Ok(Self {
            config: Arc::new(config),
            engine,
            plugins: RwLock::new(Arc::new(plugins)),
            sessions: Sessions::new(store),
            model,
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn engine(&self) -> &SandboxEngine {
        &self.engine
    }

    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    pub fn model(&self) -> &ModelClient {
        &self.model
    }

    /// The plugin set new calls use. Calls in flight keep the set they started with.
    pub fn plugins(&self) -> Arc<PluginSet> {
        self.plugins.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Swaps in a new plugin set atomically (hot reload).
    pub fn replace_plugins(&self, set: PluginSet) {
        *self.plugins.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(set);
    }
}
