//! One connection to a server: a program the host starts and speaks to over its stdin and
//! stdout, or a streamable HTTP endpoint; initialized, so that it is ready for requests.
//!
//! A started program is the operator's choice, not a plugin's: it runs as the host does,
//! outside the sandbox. What the host does limit is what it hands over — the environment
//! is cleared to the listed variables and a few basics — and how long it lives: it runs in
//! a process group of its own, killed whole when its connection is dropped (a reload that
//! removes or replaces the server, the host's exit) and by the kernel when the host dies.

use std::collections::{HashMap, VecDeque};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RunningService, ServiceExt as _};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt as _, BufReader};

use super::capped::{CappedLines, Oversized};
use super::handler::Handler;
use crate::config::{BASELINE_ENV, McpServerConfig};
use crate::sandbox::{die_with_parent, kill_group};
use crate::unpoisoned::LockUnpoisoned as _;

/// Lines of a started server's stderr kept for the error that says why it stopped.
const STDERR_LINES: usize = 12;
/// A stderr line longer than this is cut when kept.
const STDERR_LINE_BYTES: usize = 400;

/// An initialized connection, and the process behind it when the host started one.
pub(super) struct Connection {
    pub running: RunningService<RoleClient, Handler>,
    pub process: Option<Process>,
}

/// A started server's process, killed with its whole group when dropped.
pub(super) struct Process {
    child: tokio::process::Child,
    group: u32,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The task reading stderr: done once the pipe closes.
    stderr_reader: tokio::task::JoinHandle<()>,
}

impl Drop for Process {
    fn drop(&mut self) {
        kill_group(self.group);
    }
}

impl Process {
    pub fn pid(&self) -> u32 {
        self.group
    }

    /// How the process ended (waiting a moment for it, as a closed pipe comes just before
    /// the exit), and the last lines it wrote to stderr: for the error that says why a
    /// server stopped.
    pub async fn how_it_ended(&mut self) -> String {
        let status = match tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await {
            Ok(Ok(status)) => {
                // Its last words are read once the pipe closes, which is just after the exit
                // unless something it started still holds it.
                if !self.stderr_reader.is_finished() {
                    let _ = tokio::time::timeout(Duration::from_millis(500), &mut self.stderr_reader).await;
                }
                format!("it exited ({status})")
            }
            Ok(Err(error)) => format!("its exit status cannot be read ({error})"),
            Err(_) => "it closed its output but is still running".to_owned(),
        };
        let lines = self.stderr.lock_unpoisoned();
        if lines.is_empty() {
            status
        } else {
            let said: Vec<&str> = lines.iter().map(String::as_str).collect();
            format!("{status}; its last words on stderr: {}", said.join(" | "))
        }
    }
}

/// Connects to `server` (starting it, for stdio) and initializes the session. `Err` says
/// what went wrong in words for the operator; no secret is in them. A started server's
/// message over the size cap closes the connection and sets `oversized`.
pub(super) async fn connect(
    server: &McpServerConfig,
    dir: &Path,
    handler: Handler,
    oversized: &Oversized,
) -> Result<Connection, String> {
    match &server.url {
        Some(url) => {
            let transport = http_transport(server, url)?;
            let running = handler
                .serve(transport)
                .await
                .map_err(|error| format!("{url} did not initialize: {error}"))?;
            Ok(Connection { running, process: None })
        }
        None => {
            let (mut process, stdout, stdin) = start(server, dir)?;
            let stdout = CappedLines::new(stdout, oversized.clone());
            match handler.serve((stdout, stdin)).await {
                Ok(running) => Ok(Connection { running, process: Some(process) }),
                Err(error) => {
                    Err(format!("it did not initialize ({error}): {}", process.how_it_ended().await))
                }
            }
        }
    }
}

fn start(
    server: &McpServerConfig,
    dir: &Path,
) -> Result<(Process, tokio::process::ChildStdout, tokio::process::ChildStdin), String> {
    let command_name = server.command.as_deref().unwrap_or_default();
    let mut command = std::process::Command::new(command_name);
    command
        .args(&server.args)
        .env_clear()
        .current_dir(server.cwd.as_ref().map_or_else(|| dir.to_path_buf(), |cwd| dir.join(cwd)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Out of the terminal's process group, so Ctrl-C at the console is not for it, and
        // in one of its own, so all it starts can be stopped together.
        .process_group(0);
    for name in BASELINE_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    // Python puts the working folder first on `sys.path` (`python3 -m NAME` would import a
    // file from it); the server's code is what its command names, never what lies there.
    command.env("PYTHONSAFEPATH", "1");
    for name in &server.env {
        let value = std::env::var_os(name)
            .ok_or_else(|| format!("it needs the host variable `{name}` (`env`), which is not set"))?;
        command.env(name, value);
    }
    for (name, value) in &server.given.env {
        command.env(name, value);
    }
    die_with_parent(&mut command);
    let mut command = tokio::process::Command::from(command);
    command.kill_on_drop(true);
    let mut child = command.spawn().map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => {
            format!("`{command_name}` cannot be started: it is not installed, or not on PATH ({error})")
        }
        _ => format!("`{command_name}` cannot be started: {error}"),
    })?;
    let group = child.id().unwrap_or_default();
    let stdout = child.stdout.take().expect("stdout is piped");
    let stdin = child.stdin.take().expect("stdin is piped");
    let stderr = Arc::new(Mutex::new(VecDeque::new()));
    let stderr_reader = tokio::spawn(keep_stderr(
        server.name.clone(),
        child.stderr.take().expect("stderr is piped"),
        stderr.clone(),
    ));
    Ok((Process { child, group, stderr, stderr_reader }, stdout, stdin))
}

/// Logs what the server writes to stderr and keeps its last lines.
async fn keep_stderr(
    server: String,
    stderr: tokio::process::ChildStderr,
    kept: Arc<Mutex<VecDeque<String>>>,
) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        // Kept escaped: these lines reach the terminal in warnings and errors, and a server's
        // escape sequences must not retitle, redraw or write to it.
        let mut line = crate::sanitize::one_line(&line).into_owned();
        tracing::debug!(server = %server, "mcp server stderr: {line}");
        if line.len() > STDERR_LINE_BYTES {
            let mut end = STDERR_LINE_BYTES;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
        }
        let mut kept = kept.lock_unpoisoned();
        if kept.len() == STDERR_LINES {
            kept.pop_front();
        }
        kept.push_back(line);
    }
}

fn http_transport(
    server: &McpServerConfig,
    url: &str,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let mut headers = HashMap::new();
    for (name, variable) in &server.headers {
        let value = std::env::var(variable).map_err(|_| {
            format!("its header `{name}` needs the host variable `{variable}`, which is not set")
        })?;
        let mut value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| {
            format!("the host variable `{variable}` does not hold a valid value for the header `{name}`")
        })?;
        value.set_sensitive(true);
        let name =
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).expect("checked when the config loaded");
        headers.insert(name, value);
    }
    for (name, value) in &server.given.headers {
        let invalid = || format!("the header `{name}` it was given is not a valid header");
        let mut value = reqwest::header::HeaderValue::from_str(value).map_err(|_| invalid())?;
        value.set_sensitive(true);
        headers
            .insert(reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?, value);
    }
    let client = reqwest::Client::builder()
        .use_preconfigured_tls(crate::tls::client_config())
        .connect_timeout(Duration::from_millis(server.startup_timeout_ms))
        .build()
        .map_err(|error| format!("no HTTP client: {error}"))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).custom_headers(headers);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}
