//! `agent-host serve` as the tests start it: the real binary on a loopback port of its own,
//! its principals' tokens, and a client for its API and event streams.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};

use super::{FakeModel, config_text};

pub const TOKENS: [(&str, &str, &str); 3] = [
    ("alice", "AGENT_HOST_T_ALICE", "alice-token-0123456789"),
    ("bob", "AGENT_HOST_T_BOB", "bob-token-0123456789"),
    ("root", "AGENT_HOST_T_ROOT", "root-token-0123456789"),
];

pub struct Server {
    pub child: tokio::process::Child,
    pub base: String,
    pub dir: tempfile::TempDir,
    pub http: reqwest::Client,
}

/// The binary serving `plugins` against `model` on loopback with no `[serve] tokens`, and
/// the sign-in link it printed with the one-time token it made.
pub async fn serve_with_a_sign_in_link(model: &FakeModel, plugins: &str) -> (Server, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), plugins)).unwrap();
    let (child, base, mut stdout) = start(&dir.path().join("config.toml")).await;
    let link = tokio::time::timeout(Duration::from_secs(10), stdout.next_line())
        .await
        .expect("the sign-in line follows")
        .unwrap()
        .expect("a sign-in line");
    let link = link.rsplit(' ').next().unwrap().to_owned();
    assert!(link.starts_with(&format!("{base}/#token=")), "{link}");
    (Server { child, base, dir, http: client() }, link)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .use_preconfigured_tls(agent_host::tls::client_config())
        .build()
        .expect("an HTTP client")
}

/// The binary serving `plugins` against `model`, with `serve` lines added to `[serve]`.
pub async fn serve(model: &FakeModel, plugins: &str, serve: &str) -> Server {
    serve_config(&served_config(model, plugins, serve)).await
}

/// The binary serving `plugins` against `model` with its sessions in a fresh PostgreSQL
/// database (its leases lasting `lease_secs`), with `serve` lines added to `[serve]`: the
/// first of as many hosts as [`Server::another_on_the_same_store`] starts.
pub async fn serve_on_postgres(model: &FakeModel, plugins: &str, serve: &str, lease_secs: u64) -> Server {
    let url = super::postgres::TestServer::fresh_database();
    let storage = format!(
        "[storage]\nurl = \"{url}\"\npassword_env = \"{DATABASE_PASSWORD_VARIABLE}\"\nlease_secs = {lease_secs}\n"
    );
    let config =
        served_config(model, plugins, serve).replace("[storage]\npath = \"sessions.db\"\n", &storage);
    assert!(config.contains(&storage), "the storage table was replaced");
    serve_config(&config).await
}

/// The variable a PostgreSQL deployment's `password_env` names; every server is given it.
const DATABASE_PASSWORD_VARIABLE: &str = "AGENT_HOST_TEST_DB_PASSWORD";

fn served_config(model: &FakeModel, plugins: &str, serve: &str) -> String {
    let tokens: Vec<String> =
        TOKENS.iter().map(|(name, variable, _)| format!("{name} = \"{variable}\"")).collect();
    format!(
        "{}\n[serve]\ntokens = {{ {} }}\nadmins = [\"root\"]\n{serve}\n",
        config_text(&model.url(), plugins),
        tokens.join(", ")
    )
}

async fn serve_config(config: &str) -> Server {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let (child, base, _) = start(&dir.path().join("config.toml")).await;
    Server { child, base, dir, http: client() }
}

/// The binary serving the deployment of `config` on a loopback port of its own: the child,
/// its base URL and the rest of its stdout.
async fn start(
    config: &std::path::Path,
) -> (tokio::process::Child, String, tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command
        .arg("serve")
        .arg("--config")
        .arg(config)
        .args(["--listen", "127.0.0.1:0"])
        .env("AGENT_HOST_TEST_KEY", "k")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    for (_, variable, token) in TOKENS {
        command.env(variable, token);
    }
    command.env(DATABASE_PASSWORD_VARIABLE, super::postgres::PASSWORD);
    let mut child = command.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), stdout.next_line())
        .await
        .expect("serve starts")
        .unwrap();
    let line = line.unwrap_or_else(|| panic!("serve exited before listening"));
    let base = line.rsplit(' ').next().unwrap().to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{line}");
    (child, base, stdout)
}

pub fn token(principal: &str) -> &'static str {
    TOKENS.iter().find(|(name, _, _)| *name == principal).unwrap().2
}

impl Server {
    /// A second server process on this one's deployment (its config, store and plugins), as
    /// two servers sharing one store would be. Its `dir` is an empty folder of its own.
    pub async fn another_on_the_same_store(&self) -> Server {
        let (child, base, _) = start(&self.dir.path().join("config.toml")).await;
        Server { child, base, dir: tempfile::tempdir().unwrap(), http: self.http.clone() }
    }

    /// Sends the server's process `signal` (`STOP`, `CONT`, `KILL`).
    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().expect("the server runs").to_string();
        let sent = std::process::Command::new("kill").args([&format!("-{signal}"), &pid]).status().unwrap();
        assert!(sent.success(), "kill -{signal} {pid}");
    }

    pub async fn call(
        &self,
        method: reqwest::Method,
        principal: Option<&str>,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(principal) = principal {
            request = request.bearer_auth(token(principal));
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    pub async fn get(&self, principal: &str, path: &str) -> (StatusCode, Value) {
        self.call(reqwest::Method::GET, Some(principal), path, None).await
    }

    pub async fn post(&self, principal: &str, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(reqwest::Method::POST, Some(principal), path, Some(body)).await
    }

    pub async fn new_session(&self, principal: &str) -> String {
        let (status, body) = self.post(principal, "/v1/sessions", json!({})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_owned()
    }

    /// The session's events, from after `last_seen` (sent as a plain number), until one
    /// satisfies `until`; each with the number its id ends in.
    pub async fn events_until(
        &self,
        principal: &str,
        session: &str,
        last_seen: Option<u64>,
        until: impl Fn(&Value) -> bool,
    ) -> Vec<(u64, Value)> {
        let last_seen = last_seen.map(|last| last.to_string());
        let events = self.events_after(principal, session, last_seen.as_deref(), until).await;
        let number = |id: &str| id.rsplit('-').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        events.into_iter().map(|(id, event)| (number(&id), event)).collect()
    }

    /// The session's events with their ids as sent, from after `last_event_id`, until one
    /// satisfies `until`.
    pub async fn events_after(
        &self,
        principal: &str,
        session: &str,
        last_event_id: Option<&str>,
        until: impl Fn(&Value) -> bool,
    ) -> Vec<(String, Value)> {
        let mut request = self
            .http
            .get(format!("{}/v1/sessions/{session}/events", self.base))
            .bearer_auth(token(principal));
        if let Some(last) = last_event_id {
            request = request.header("Last-Event-ID", last);
        }
        let mut response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
        let mut events = Vec::new();
        let mut pending = String::new();
        let (mut id, mut data) = (None, String::new());
        let read = async {
            while let Some(chunk) = response.chunk().await.unwrap() {
                pending.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = pending.find('\n') {
                    let line: String = pending.drain(..=end).collect();
                    let line = line.trim_end_matches(['\n', '\r']);
                    if let Some(value) = line.strip_prefix("id:") {
                        id = Some(value.trim().to_owned());
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim_start());
                    } else if line.is_empty() && !data.is_empty() {
                        let event: Value = serde_json::from_str(&data).unwrap();
                        data.clear();
                        let done = until(&event);
                        events.push((id.take().unwrap_or_default(), event));
                        if done {
                            return;
                        }
                    }
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(30), read)
            .await
            .unwrap_or_else(|_| panic!("no such event; got {events:?}"));
        events
    }

    pub async fn turn_events(&self, principal: &str, session: &str, text: &str) -> Vec<(u64, Value)> {
        let (status, body) =
            self.post(principal, &format!("/v1/sessions/{session}/messages"), json!({ "text": text })).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        self.events_until(principal, session, None, |event| event["type"] == "turn_ended").await
    }
}
