//! The [`Host`] and all it offers front ends: every `impl Host` is here, its work done in
//! the rooms (`session`, `turn`, `tool_call`).

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use anyhow::Context as _;

use super::children::RunningChildren;
use super::plugin_model::PluginModel;
use super::session::{LiveSession, LiveSessions, Views, command, mcp_table};
use super::window_check::check_window;
use super::{Approver, Snapshot, TurnError, TurnOutcome};
use crate::config::{Config, ConfigError};
use crate::events::{BuildProgressOnStderr, Event, EventSink, NoEvents, PluginView};
use crate::mcp::McpSet;
use crate::model::ModelClient;
use crate::model::tokens::TokenBudget;
use crate::plugins::{CallContext, PluginSet};
use crate::runtime::SandboxEngine;
use crate::state::{SessionStore, StateBag};
use crate::tools::ToolResult;
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
    /// Child agents whose turns run here, each cancellable alone.
    running_children: RunningChildren,
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
        let sessions = LiveSessions::with_lease(store, lease);
        sessions.seed_new_sessions(plugins.seeds());
        Ok(Self {
            current: RwLock::new(Snapshot {
                config: Arc::new(config),
                plugins: Arc::new(plugins),
                mcp: Arc::new(mcp),
            }),
            engine,
            sessions,
            model,
            budget,
            last_reload: Mutex::new(ReloadStatus { at: SystemTime::now(), error: None, restart: None }),
            reloading: tokio::sync::Mutex::new(()),
            reloaded: tokio::sync::watch::Sender::new(0),
            running_children: RunningChildren::default(),
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

    pub(super) fn running_children(&self) -> &RunningChildren {
        &self.running_children
    }

    /// Cancels child agent `id`'s turn if it runs on this host, its parent's turn going on
    /// with the child's call answered that it was cancelled; `false` when no such child runs
    /// here.
    pub fn cancel_child(&self, id: &str) -> bool {
        self.running_children.cancel(id)
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
            meter: super::turn::meter::outside_a_turn(&self.config().agent, session),
            results: None,
            agents: None,
        }
    }

    /// Runs one user turn to its end. The session is committed after every step (a model
    /// reply, with the results of its tools when none of them changes anything), so an
    /// error (or a dropped future: Ctrl-C) leaves it at the last complete step. Every end,
    /// a dropped future's too, is reported as one `turn_ended` event.
    pub async fn run_turn(
        &self,
        session: &mut LiveSession,
        prompt: &str,
        sink: &dyn EventSink,
        approver: &dyn Approver,
    ) -> Result<TurnOutcome, TurnError> {
        super::turn::run(self, session, prompt, sink, approver).await
    }

    /// Runs `/name args`. Built-in commands first, then the plugin that declared `name`.
    /// The session is committed afterwards, so a command's state change is durable.
    pub async fn command(
        &self,
        session: &mut LiveSession,
        line: &str,
        sink: &dyn EventSink,
    ) -> Result<String, String> {
        command::command(self, session, line, sink).await
    }

    /// After an operator command: the turn a plugin queued (`queued`, contract 0.2.7), which
    /// the front end runs at once, as if the operator had sent its prompt — a loop just set
    /// or resumed starts working. The first plugin in config order that queues one decides.
    /// Never asked after a turn: a turn that should go on is continued within its caps.
    pub async fn queued_turn(&self, session: &mut LiveSession, sink: &dyn EventSink) -> Option<String> {
        command::queued_turn(self, session, sink).await
    }

    /// Calls a tool as if the model had, without a model call: schema validation, hooks,
    /// the tool, the result. For tests, scripts and front ends that offer tools directly.
    pub async fn invoke_tool(
        &self,
        session: &mut LiveSession,
        name: &str,
        arguments: &serde_json::Value,
        sink: &dyn EventSink,
    ) -> Result<ToolResult, TurnError> {
        command::invoke_tool(self, session, name, arguments, sink).await
    }

    /// Refreshes `session`'s views on the current plugin set, sending `view_changed` to `sink`
    /// for each that changed: what a front end calls when it opens, creates or resumes a
    /// session (every view then counts as changed), and whenever it wants them current.
    pub async fn refresh_views(&self, session: &mut LiveSession, sink: &dyn EventSink) {
        session.refresh_views(&self.plugins(), sink).await;
    }

    /// What each plugin would show a new session, on an empty state: what `check` lists, so
    /// an operator sees a mode plugin's modes before opening anything.
    pub async fn new_session_views(&self) -> Vec<PluginView> {
        let mut views = Views::default();
        views.refresh(&self.plugins(), "", &StateBag::default(), &NoEvents).await;
        views.current()
    }

    /// The loaded plugins, one line each, and the last reload error: `/plugins`, `--check`.
    pub fn plugin_table(&self) -> String {
        command::plugin_table(self)
    }

    /// One line for each power a plugin holds to act in the operator's place (`review`,
    /// `queued`), and the grant it holds it by: what a front end says at start, so that no
    /// plugin approves calls or starts turns without the operator having been told.
    pub fn powers_granted(&self) -> Vec<String> {
        command::powers_granted(self)
    }

    /// The MCP servers, a few lines each; empty when the deployment lists none.
    pub fn mcp_table(&self) -> String {
        mcp_table::mcp_table(self)
    }

    /// The servers that could not be started, each as an error line naming its entry:
    /// what `--check` refuses a deployment for.
    pub fn mcp_failures(&self) -> Vec<String> {
        mcp_table::mcp_failures(self)
    }

    /// The fixed part of a new session's first request, as the plugins contribute it now,
    /// against the model's context window (see `window_check`).
    pub async fn check_context_window(&self) -> Result<(), ConfigError> {
        let snapshot = self.snapshot();
        check_window(self.budget(), &snapshot.config, &snapshot.plugins, &snapshot.mcp).await
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
            check_window(&self.budget, &config, &set, &mcp.set).await?;
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
                self.sessions.seed_new_sessions(set.seeds());
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
