use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use anyhow::Context as _;

use super::Snapshot;
use super::live_session::{LiveSession, LiveSessions};
use super::plugin_model::PluginModel;
use crate::config::Config;
use crate::events::{BuildProgressOnStderr, Event, EventSink};
use crate::mcp::McpSet;
use crate::model::ModelClient;
use crate::model::tokens::TokenBudget;
use crate::plugins::{CallContext, PluginSet};
use crate::runtime::SandboxEngine;
use crate::state::SessionStore;
use crate::unpoisoned::{LockUnpoisoned as _, RwLockUnpoisoned as _};

/// Everything a running deployment needs: the engine, the current config, plugin set and
/// MCP servers, the sessions and the model. Shared by every session (`Arc<Host>`).
pub struct Host {
    /// The config, the plugin set and the MCP servers, swapped together by a reload.
    current: RwLock<Snapshot>,
    engine: SandboxEngine,
    sessions: LiveSessions,
    model: ModelClient,
    /// What model calls are counted with and measured against: `[model]`, read at start-up.
    budget: TokenBudget,
    last_reload: Mutex<ReloadStatus>,
    /// Reloads run one at a time, so two saves in a row cannot race each other's swap.
    reloading: tokio::sync::Mutex<()>,
    /// Counts the reloads that swapped a new set in, for front ends that keep sessions open
    /// while nothing else would tell them (see [`Host::reloads`]).
    reloaded: tokio::sync::watch::Sender<u64>,
}

/// When the plugin set last changed, and the last reload error (until a reload succeeds).
#[derive(Debug, Clone)]
pub struct ReloadStatus {
    pub at: SystemTime,
    pub error: Option<String>,
    /// What the config file says that only a restart applies (`[model]`), while it says so.
    pub restart: Option<String>,
}

impl Host {
    /// Loads the plugins and opens the configured store (SQLite, or PostgreSQL at `url`).
    pub async fn new(config: Config, model: ModelClient) -> anyhow::Result<Self> {
        let store = crate::state::open_store(&config)?;
        Self::with_store(config, model, store).await
    }

    /// Like [`Host::new`] with another session store.
    pub async fn with_store(
        config: Config,
        model: ModelClient,
        store: Arc<dyn SessionStore>,
    ) -> anyhow::Result<Self> {
        let engine = crate::plugins::engine().context("cannot start the plugin runtime")?;
        if config.runtime.sandbox == crate::config::SandboxMode::None {
            warn_unconfined();
        }
        let budget = TokenBudget::new(&config.model, &model);
        budget.counter.prepare();
        let plugins = PluginSet::load(&engine, &config, None, &BuildProgressOnStderr).await?;
        // A server that fails to start is skipped, not fatal: the front end reports it
        // (`McpSet::failures`), and `--check` refuses the deployment for it.
        let mcp = McpSet::start(&config, None).await.set;
        let lease = Duration::from_secs(config.storage.lease_secs.get());
        Ok(Self {
            current: RwLock::new(Snapshot {
                config: Arc::new(config),
                plugins: Arc::new(plugins),
                mcp: Arc::new(mcp),
            }),
            engine,
            sessions: LiveSessions::with_lease(store, lease),
            model,
            budget,
            last_reload: Mutex::new(ReloadStatus { at: SystemTime::now(), error: None, restart: None }),
            reloading: tokio::sync::Mutex::new(()),
            reloaded: tokio::sync::watch::Sender::new(0),
        })
    }

    /// The config and plugin set new round trips use, taken together. Calls in flight keep
    /// the snapshot they started with.
    pub fn snapshot(&self) -> Snapshot {
        self.current.read_unpoisoned().clone()
    }

    /// The config new calls use.
    pub fn config(&self) -> Arc<Config> {
        self.current.read_unpoisoned().config.clone()
    }

    pub fn engine(&self) -> &SandboxEngine {
        &self.engine
    }

    pub fn sessions(&self) -> &LiveSessions {
        &self.sessions
    }

    pub fn model(&self) -> &ModelClient {
        &self.model
    }

    pub fn budget(&self) -> &TokenBudget {
        &self.budget
    }

    /// What a plugin call for `session` outside a turn's model calls is given: the session,
    /// the deployment's model, and the meter as read now.
    pub(super) fn call_context(&self, session: &LiveSession) -> CallContext {
        CallContext {
            session_id: session.id().to_owned(),
            model_calls: session.model_calls(),
            turn_iteration: 0,
            model: Some(PluginModel::access(self.model().clone(), *self.budget(), session.id())),
            meter: super::meter::outside_a_turn(&self.config().agent, session),
            results: None,
        }
    }

    /// The plugin set new calls use. Calls in flight keep the set they started with.
    pub fn plugins(&self) -> Arc<PluginSet> {
        self.current.read_unpoisoned().plugins.clone()
    }

    /// The MCP servers new calls use.
    pub fn mcp(&self) -> Arc<McpSet> {
        self.current.read_unpoisoned().mcp.clone()
    }

    /// Changes each time a reload swaps a new set in, however it was started (the file
    /// watcher, `/reload`, `POST /v1/reload`): what tells a front end with idle sessions open
    /// to refresh their views.
    pub fn reloads(&self) -> tokio::sync::watch::Receiver<u64> {
        self.reloaded.subscribe()
    }

    pub fn reload_status(&self) -> ReloadStatus {
        self.last_reload.lock_unpoisoned().clone()
    }

    /// Reads the config file again and loads the plugin set it names — off the hot path:
    /// sessions keep running on the current set meanwhile — then swaps both in at once.
    /// Unchanged plugins are reused; changed ones are compiled (or taken from the compile
    /// cache) and configured. On any error the current set stays and the error is returned.
    ///
    /// The `[agent]` section and the plugins apply at once; `[model]` and `[storage]` are
    /// read at start-up only: a reload keeps the running `[model]` in the config it swaps in,
    /// so no part of the deployment reads a model it does not call, and says so in
    /// `ReloadStatus::restart` (shown by `/reload` and `/plugins`, and logged once).
    pub async fn reload(&self, sink: &dyn EventSink) -> anyhow::Result<()> {
        let _one_at_a_time = self.reloading.lock().await;
        let file = self.config().source.file.clone();
        let result = async {
            let mut config = Config::load(&file)?;
            let previous = self.snapshot();
            let restart = (config.model != previous.config.model).then(|| model_waits(&self.model));
            config.model = previous.config.model.clone();
            let set = PluginSet::load(&self.engine, &config, Some(&previous.plugins), sink).await?;
            let mcp = McpSet::start(&config, Some(&previous.mcp)).await;
            super::window_check::check_window(&self.budget, &config, &set, &mcp.set).await?;
            Ok::<_, anyhow::Error>((config, set, mcp, restart))
        }
        .await;
        let mut status = self.last_reload.lock_unpoisoned();
        match result {
            Ok((config, set, mcp, restart)) => {
                if let Some(note) = restart.as_ref().filter(|note| status.restart.as_ref() != Some(*note)) {
                    tracing::warn!("{note}");
                }
                for plugin in set.freshly_loaded() {
                    sink.emit(&plugin.loaded_event());
                }
                for event in &mcp.events {
                    sink.emit(event);
                }
                *self.current.write_unpoisoned() =
                    Snapshot { config: Arc::new(config), plugins: Arc::new(set), mcp: Arc::new(mcp.set) };
                *status = ReloadStatus { at: SystemTime::now(), error: None, restart };
                self.reloaded.send_modify(|count| *count += 1);
                Ok(())
            }
            Err(error) => {
                let message = format!("{error:#}");
                // Said once, by whoever started the reload: the front end the sink draws, the
                // answer to `/reload` or `POST /v1/reload`; a log warning too would say it twice.
                tracing::debug!(%message, "the reload was refused");
                sink.emit(&Event::PluginRejected {
                    path: file.display().to_string(),
                    error: message.clone(),
                });
                status.error = Some(message);
                Err(error)
            }
        }
    }
}

/// What a reload says while the config file's `[model]` differs from the one the host runs.
fn model_waits(running: &ModelClient) -> String {
    format!(
        "[model] in config.toml changed; it applies when agent-host starts again: until then the \
         model in use stays {}",
        running.describe()
    )
}

/// Said at every start with `[runtime] sandbox = "none"`: in the log, and on stderr
/// directly when the log would not show a warning.
fn warn_unconfined() {
    const WARNING: &str = "[runtime] sandbox = \"none\": processes that plugins start run \
                           unconfined, as this host's user, with its files, processes and network";
    tracing::warn!("{WARNING}");
    if !tracing::enabled!(tracing::Level::WARN) {
        eprintln!("warning: {WARNING}");
    }
}
