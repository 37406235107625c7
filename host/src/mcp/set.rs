//! The MCP servers a deployment runs, started together and swapped with the plugins by a
//! reload: a server whose entry is unchanged keeps running (its calls in flight and its
//! process untouched); a new or changed entry starts a server; one no longer listed stops
//! once the last snapshot holding it is dropped.

use std::path::Path;

use std::sync::Arc;

use super::server::{McpServer, ServerState, ServerStatus};
use super::tools::McpTool;
use crate::config::{Config, McpServerConfig};
use crate::events::Event;

#[derive(Default)]
pub struct McpSet {
    servers: Vec<Arc<McpServer>>,
    /// The private empty folder a client's servers start in; removed with the set, after
    /// the servers (fields drop in order).
    _private_folder: Option<tempfile::TempDir>,
}

/// What starting a set did, for the event stream.
pub struct Started {
    pub set: McpSet,
    /// `mcp_server_started` / `mcp_server_failed` for each server this start began.
    pub events: Vec<Event>,
}

impl McpSet {
    /// The enabled servers of `config`, in order: those of `previous` whose entry is the
    /// same are kept, the others started, all at once.
    pub async fn start(config: &Config, previous: Option<&McpSet>) -> Started {
        Self::start_entries(&config.mcp, &config.source.dir, previous).await
    }

    /// The enabled servers of `entries`, their folders relative to `dir`, in order: those of
    /// `previous` whose entry is the same are kept, the others started, all at once.
    pub async fn start_entries(
        entries: &[McpServerConfig],
        dir: &Path,
        previous: Option<&McpSet>,
    ) -> Started {
        let starts = entries.iter().filter(|entry| entry.enabled).map(|entry| async move {
            let kept = previous
                .and_then(|set| set.servers.iter().find(|server| server.config() == entry))
                .filter(|server| server.state() != ServerState::Failed);
            match kept {
                Some(server) => (server.clone(), false),
                None => (McpServer::start(entry.clone(), dir.to_path_buf()).await, true),
            }
        });
        let servers = futures_util::future::join_all(starts).await;
        let events =
            servers.iter().filter(|(_, fresh)| *fresh).map(|(server, _)| event(&server.status())).collect();
        let servers = servers.into_iter().map(|(server, _)| server).collect();
        Started { set: Self { servers, _private_folder: None }, events }
    }

    /// The enabled servers of `entries` a client asked for, each started in `folder`: a
    /// private empty folder made for them (`private_folder`), never the client's project,
    /// which a plugin may be granted to write (`config/server_code.rs`).
    pub async fn start_in_private_folder(entries: &[McpServerConfig], folder: tempfile::TempDir) -> Started {
        let mut started = Self::start_entries(entries, folder.path(), None).await;
        started.set._private_folder = Some(folder);
        started
    }

    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// Each ready server with the tools it offers now.
    pub fn tools(&self) -> impl Iterator<Item = (&Arc<McpServer>, Arc<[Arc<McpTool>]>)> {
        self.servers.iter().map(|server| (server, server.tools()))
    }

    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.servers.iter().map(|server| server.status()).collect()
    }

    /// The servers that could not be started, with why: what `--check` refuses.
    pub fn failures(&self) -> Vec<(String, String)> {
        self.statuses()
            .into_iter()
            .filter(|status| status.state == ServerState::Failed)
            .map(|status| (status.name, status.last_error.unwrap_or_default()))
            .collect()
    }
}

/// The event a server's start is reported with.
pub fn event(status: &ServerStatus) -> Event {
    match status.state {
        ServerState::Failed => Event::McpServerFailed {
            server: status.name.clone(),
            error: status.last_error.clone().unwrap_or_default(),
        },
        _ => Event::McpServerStarted {
            server: status.name.clone(),
            transport: status.transport.as_str().to_owned(),
            tools: status.tools.clone(),
            startup_ms: status.startup.map_or(0, |took| took.as_millis() as u64),
            tool_errors: status.tool_errors.clone(),
        },
    }
}

/// A new empty folder, readable by the operator alone, for a client's servers to start in.
pub fn private_folder() -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt as _;
    let folder = tempfile::Builder::new().prefix("agent-host-mcp-").tempdir()?;
    std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o700))?;
    Ok(folder)
}
