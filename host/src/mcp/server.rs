//! One MCP server over its life: started (within its start-up time), its tools listed,
//! listed again when it says they changed, restarted with backoff when it stops, and
//! stopped — process group and all — when the last snapshot that holds it is dropped.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::{Notify, watch};

use super::capped::{MAX_MESSAGE_BYTES, Oversized};
use super::handler::Handler;
use super::launch::{Connection, connect};
use super::tools::{McpTool, offered};
use crate::config::{McpServerConfig, McpTransport};
use crate::tools::ToolResult;
use crate::unpoisoned::RwLockUnpoisoned as _;

/// Restarts after a server stops, before it is given up on until the next reload.
const MAX_RESTARTS: u32 = 5;
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Where a server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerState {
    Starting,
    Ready,
    /// It stopped; the host starts it again after a backoff.
    Restarting,
    /// It could not be started (or restarted, `MAX_RESTARTS` times); its tools are not
    /// offered until a reload.
    Failed,
}

impl ServerState {
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Starting => "starting",
            ServerState::Ready => "ready",
            ServerState::Restarting => "restarting",
            ServerState::Failed => "failed",
        }
    }
}

/// What `/mcp` and `--check` show of a server.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    pub name: String,
    pub transport: McpTransport,
    pub state: ServerState,
    pub tools: Vec<String>,
    /// How long its (last) start took, to its tools listed.
    pub startup: Option<Duration>,
    pub last_error: Option<String>,
    /// The load errors of tools that are not offered.
    pub tool_errors: Vec<String>,
    pub calls: u64,
    pub restarts: u32,
    /// Times its tools were listed: at each start, and again at each `tools/list_changed`.
    pub listings: u32,
    pub pid: Option<u32>,
}

/// A server and what is known of it now.
pub struct McpServer {
    config: McpServerConfig,
    shared: Arc<Shared>,
    supervisor: tokio::task::JoinHandle<()>,
}

struct Shared {
    name: String,
    transport: McpTransport,
    live: RwLock<Live>,
    /// Bumped whenever `live` changes, so a start can wait for its outcome.
    changes: watch::Sender<u64>,
    tools_changed: Arc<Notify>,
    calls: AtomicU64,
    /// Set when the connection closed on a message over the size cap.
    oversized: Oversized,
}

struct Live {
    state: ServerState,
    peer: Option<Peer<RoleClient>>,
    tools: Arc<[Arc<McpTool>]>,
    tool_errors: Vec<String>,
    last_error: Option<String>,
    startup: Option<Duration>,
    restarts: u32,
    listings: u32,
    pid: Option<u32>,
}

impl Drop for McpServer {
    fn drop(&mut self) {
        // Dropping the supervisor's future drops the connection and kills the process group.
        self.supervisor.abort();
    }
}

impl McpServer {
    /// Starts `config`'s server (its program's working folder relative to `dir`) and waits
    /// until it is ready or has failed; a failed server is returned too, to be shown.
    pub async fn start(config: McpServerConfig, dir: PathBuf) -> Arc<Self> {
        let tools_changed = Arc::new(Notify::new());
        let shared = Arc::new(Shared {
            name: config.name.clone(),
            transport: config.transport(),
            live: RwLock::new(Live {
                state: ServerState::Starting,
                peer: None,
                tools: Arc::new([]),
                tool_errors: Vec::new(),
                last_error: None,
                startup: None,
                restarts: 0,
                listings: 0,
                pid: None,
            }),
            changes: watch::Sender::new(0),
            tools_changed,
            calls: AtomicU64::new(0),
            oversized: Oversized::default(),
        });
        let mut changes = shared.changes.subscribe();
        let supervisor = tokio::spawn(supervise(shared.clone(), config.clone(), dir));
        let server = Arc::new(Self { config, shared, supervisor });
        // A closed channel means the supervisor ended, which it does only once failed.
        let _ = changes.wait_for(|_| server.state() != ServerState::Starting).await;
        server
    }

    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The entry it was started from: an equal entry on reload keeps this server running.
    pub fn config(&self) -> &McpServerConfig {
        &self.config
    }

    pub fn state(&self) -> ServerState {
        self.shared.read().state
    }

    /// The tools offered now (none while it is not ready).
    pub fn tools(&self) -> Arc<[Arc<McpTool>]> {
        let live = self.shared.read();
        if live.state == ServerState::Ready { live.tools.clone() } else { Arc::new([]) }
    }

    pub fn status(&self) -> ServerStatus {
        let live = self.shared.read();
        ServerStatus {
            name: self.shared.name.clone(),
            transport: self.shared.transport,
            state: live.state,
            tools: live.tools.iter().map(|tool| tool.name.clone()).collect(),
            startup: live.startup,
            last_error: live.last_error.clone(),
            tool_errors: live.tool_errors.clone(),
            calls: self.shared.calls.load(Ordering::Relaxed),
            restarts: live.restarts,
            listings: live.listings,
            pid: live.pid,
        }
    }

    /// Calls `tool` with `arguments` (an object, checked against its schema), within the
    /// server's `timeout_ms`; its result cut to `max_bytes`. Dropping the future (Ctrl-C)
    /// or passing the deadline sends the server `notifications/cancelled`.
    pub async fn call(&self, tool: &McpTool, arguments: Value, max_bytes: usize) -> ToolResult {
        let failure = |output: String| ToolResult { ok: false, output };
        let peer = {
            let live = self.shared.read();
            match (&live.peer, live.state) {
                (Some(peer), ServerState::Ready) => peer.clone(),
                (_, state) => {
                    let why =
                        live.last_error.as_deref().map(|error| format!(": {error}")).unwrap_or_default();
                    return failure(format!(
                        "MCP server `{}` is {} and cannot take calls now{why}",
                        self.shared.name,
                        state.as_str()
                    ));
                }
            }
        };
        self.shared.calls.fetch_add(1, Ordering::Relaxed);
        let Value::Object(arguments) = arguments else {
            return failure(format!("the arguments for `{}` are not a JSON object", tool.name));
        };
        let params = CallToolRequestParams::new(tool.remote.clone()).with_arguments(arguments);
        let deadline = Duration::from_millis(self.config.timeout_ms);
        match tokio::time::timeout(deadline, peer.call_tool(params)).await {
            Ok(Ok(result)) => super::content::tool_result(&result, max_bytes),
            Ok(Err(ServiceError::McpError(error))) => {
                failure(format!("MCP server `{}` refused the call: {}", self.shared.name, error.message))
            }
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)))
                if self.shared.oversized.happened() =>
            {
                failure(format!(
                    "MCP server `{}` answered `{}` with a message over {} MiB, the most one message \
                     may be; the call failed and the host is starting the server again",
                    self.shared.name,
                    tool.remote,
                    MAX_MESSAGE_BYTES / (1024 * 1024)
                ))
            }
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => failure(format!(
                "MCP server `{}` stopped during the call; the host is starting it again",
                self.shared.name
            )),
            Ok(Err(error)) => failure(format!("MCP server `{}` failed the call: {error}", self.shared.name)),
            Err(_) => failure(format!(
                "MCP server `{}` did not answer `{}` within {} ms (`timeout_ms`); the call was cancelled",
                self.shared.name, tool.remote, self.config.timeout_ms
            )),
        }
    }
}

impl Shared {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Live> {
        self.live.read_unpoisoned()
    }

    fn update(&self, change: impl FnOnce(&mut Live)) {
        change(&mut self.live.write_unpoisoned());
        self.changes.send_modify(|version| *version += 1);
    }
}

/// Starts the server, keeps its tool list current, restarts it when it stops.
async fn supervise(shared: Arc<Shared>, config: McpServerConfig, dir: PathBuf) {
    let mut failures_in_a_row = 0;
    loop {
        let started = Instant::now();
        let handler = Handler { tools_changed: shared.tools_changed.clone() };
        let startup = Duration::from_millis(config.startup_timeout_ms);
        let connected = match tokio::time::timeout(startup, ready(&shared, &config, &dir, handler)).await {
            Ok(result) => result,
            Err(_) => Err(format!(
                "it did not start within {} ms (`startup_timeout_ms`)",
                config.startup_timeout_ms
            )),
        };
        let error = match connected {
            Ok((connection, tools)) => {
                failures_in_a_row = 0;
                let took = started.elapsed();
                tracing::info!(server = %shared.name, ms = took.as_millis() as u64, "mcp server ready");
                shared.update(|live| {
                    live.state = ServerState::Ready;
                    live.peer = Some(connection.running.peer().clone());
                    (live.tools, live.tool_errors) = tools;
                    live.listings += 1;
                    live.startup = Some(took);
                    live.pid = connection.process.as_ref().map(|process| process.pid());
                });
                serve(&shared, &config, connection).await
            }
            Err(error) => error,
        };
        let ever_ready = shared.read().startup.is_some();
        failures_in_a_row += 1;
        let give_up = !ever_ready || failures_in_a_row > MAX_RESTARTS;
        tracing::warn!(server = %shared.name, %error, give_up, "mcp server stopped");
        shared.update(|live| {
            live.state = if give_up { ServerState::Failed } else { ServerState::Restarting };
            live.peer = None;
            live.pid = None;
            live.last_error = Some(error);
            if !give_up {
                live.restarts += 1;
            }
        });
        if give_up {
            return;
        }
        let backoff = FIRST_BACKOFF.saturating_mul(1 << (failures_in_a_row - 1).min(16)).min(MAX_BACKOFF);
        tokio::time::sleep(backoff).await;
    }
}

type Tools = (Arc<[Arc<McpTool>]>, Vec<String>);

/// Connected and the tools listed.
async fn ready(
    shared: &Shared,
    config: &McpServerConfig,
    dir: &std::path::Path,
    handler: Handler,
) -> Result<(Connection, Tools), String> {
    shared.oversized.clear();
    let mut connection = connect(config, dir, handler, &shared.oversized).await?;
    match list_tools(shared, config, &connection.running.peer().clone()).await {
        Ok(tools) => Ok((connection, tools)),
        Err(error) => {
            let ended = match connection.process.as_mut() {
                Some(process) => format!("; {}", process.how_it_ended().await),
                None => String::new(),
            };
            Err(format!("{error}{ended}"))
        }
    }
}

async fn list_tools(
    shared: &Shared,
    config: &McpServerConfig,
    peer: &Peer<RoleClient>,
) -> Result<Tools, String> {
    let listed =
        peer.list_all_tools().await.map_err(|error| format!("it did not list its tools: {error}"))?;
    let reads_only = |tool: &str, hint: Option<bool>| config.reads_only(tool, hint);
    let (tools, errors) = offered(&shared.name, &config.tools, &reads_only, &listed);
    for error in &errors {
        tracing::warn!(server = %shared.name, "{error}");
    }
    Ok((tools.into_iter().map(Arc::new).collect(), errors))
}

/// Serves a ready connection until it stops, listing the tools again whenever the server
/// says they changed. Returns why it stopped.
async fn serve(shared: &Shared, config: &McpServerConfig, connection: Connection) -> String {
    let Connection { running, mut process } = connection;
    let peer = running.peer().clone();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    loop {
        tokio::select! {
            quit = &mut waiting => {
                let ended = match process.as_mut() {
                    Some(process) => process.how_it_ended().await,
                    None => "the connection closed".to_owned(),
                };
                if shared.oversized.happened() {
                    return format!(
                        "it sent a message over {} MiB, the most one message may be: {ended}",
                        MAX_MESSAGE_BYTES / (1024 * 1024)
                    );
                }
                return match quit {
                    Ok(reason) => format!("it stopped ({reason:?}): {ended}"),
                    Err(error) => format!("its session failed ({error}): {ended}"),
                };
            }
            () = shared.tools_changed.notified() => {
                let listing = tokio::time::timeout(Duration::from_millis(config.timeout_ms), list_tools(shared, config, &peer));
                match listing.await {
                    Ok(Ok(tools)) => {
                        tracing::info!(server = %shared.name, tools = tools.0.len(), "mcp tool list changed");
                        shared.update(|live| {
                            (live.tools, live.tool_errors) = tools;
                            live.listings += 1;
                        });
                    }
                    Ok(Err(error)) => tracing::warn!(server = %shared.name, %error, "mcp tool list not refreshed"),
                    Err(_) => tracing::warn!(server = %shared.name, "mcp tool list not refreshed in time"),
                }
            }
        }
    }
}
