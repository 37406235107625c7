//! `--serve`: the same todo workflow driven through `agent-host serve` — each session created
//! over HTTP, its event stream opened, its message posted, the stream read to `turn_ended`
//! and the todos checked done from the stream's `todos-changed` events — beside the library
//! path (`Host::run_turn`) on the same host, in the same minutes. Then 1,000 event streams
//! held open on idle sessions, with the process's memory before, once they are open, and
//! after a run of sessions beside them.
//!
//! With several hosts (`--store postgres --hosts N`) each runs `serve` on a port of its own,
//! all in this process on one runtime: the workflow goes through them twice, first each
//! session's requests all to one host (session i to host i mod N, as a load balancer that
//! keeps a session to one host would send them), then its message posted to the next host
//! (as one that spreads requests would), which hands the session over through the database.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_host::Host;
use agent_host_serve::ServeOptions;
use serde_json::Value;

use super::timing::{cpu_time, memory_kib, server_cpu};
use super::{Storage, endpoint, run_batch};

/// The principal the bench calls as, and its token.
pub const TOKEN_VARIABLE: &str = "AGENT_HOST_BENCH_TOKEN";
pub const TOKEN: &str = "bench-token-0123456789";
const STREAMS: usize = 1_000;

pub fn run(
    runtime: &tokio::runtime::Runtime,
    hosts: &[Arc<Host>],
    storage: &Storage,
    sessions: usize,
    concurrency: usize,
) -> anyhow::Result<()> {
    let clients = hosts.iter().map(|host| serve(runtime, host)).collect::<anyhow::Result<Vec<_>>>()?;
    let client = Cluster { clients, spread: false };
    let spread = Cluster { spread: true, ..client.clone() };
    let host = &hosts[0];
    println!(
        "agent-host serve benchmark: stock plugins, the todo workflow through the HTTP API and SSE on loopback; \
         {} store, {} host(s) in this process on one runtime of 2 workers{}\n",
        storage.name(),
        hosts.len(),
        match storage {
            Storage::Sqlite => "",
            Storage::Postgres(_) => "; the PostgreSQL server's processes on the same 2 cores",
        }
    );
    runtime.block_on(client.batch(50, 4))?;
    runtime.block_on(run_batch(host, 50, 4));

    let model_calls = (sessions as u64 * endpoint::MODEL_CALLS_PER_SESSION) as f64;
    let phase = |label: &str, run: &dyn Fn() -> anyhow::Result<()>| -> anyhow::Result<f64> {
        let cpu_before = cpu_time(endpoint::THREAD);
        let database_port = match storage {
            Storage::Sqlite => None,
            Storage::Postgres(_) => Some(super::test_server::TestServer::shared().port),
        };
        let database_before = database_port.map(server_cpu);
        let started = Instant::now();
        run()?;
        let seconds = started.elapsed().as_secs_f64();
        let (cpu, endpoint_cpu) = cpu_time(endpoint::THREAD);
        let host_cpu = (cpu - cpu_before.0) - (endpoint_cpu - cpu_before.1);
        let database_cpu = database_port
            .map(server_cpu)
            .zip(database_before)
            .map(|(after, before)| after.saturating_sub(before));
        println!(
            "{label} (concurrency {concurrency}): {sessions} sessions in {seconds:.2} s, {:.0} sessions/s; \
             CPU per model call {:.0} µs (every thread but the endpoint's: host, server and client){}",
            sessions as f64 / seconds,
            host_cpu.as_secs_f64() * 1e6 / model_calls,
            database_cpu.map_or(String::new(), |cpu| format!(
                ", {:.0} µs in the database server",
                cpu.as_secs_f64() * 1e6 / model_calls
            ))
        );
        Ok(sessions as f64 / seconds)
    };
    let library = phase("library (Host::run_turn)", &|| {
        let batch = runtime.block_on(run_batch(host, sessions, concurrency));
        anyhow::ensure!(
            batch.failures.is_empty(),
            "library sessions failed: {:?}",
            &batch.failures[..batch.failures.len().min(3)]
        );
        Ok(())
    })?;
    let label = if hosts.len() == 1 {
        "through serve (HTTP + SSE)".to_owned()
    } else {
        format!("through {} serve hosts, each session on one", hosts.len())
    };
    let served = phase(&label, &|| runtime.block_on(client.batch(sessions, concurrency)))?;
    println!(
        "  through serve: {:.0}% of the library's sessions/s; {:.0} µs more wall time per model call\n",
        served / library * 100.0,
        (1.0 / served - 1.0 / library) * 1e6 / endpoint::MODEL_CALLS_PER_SESSION as f64
    );
    if hosts.len() > 1 {
        let label = format!("through {} serve hosts, each message posted to the next host", hosts.len());
        phase(&label, &|| runtime.block_on(spread.batch(sessions, concurrency)))?;
        return Ok(());
    }
    runtime.block_on(client.clients[0].held_streams(STREAMS, concurrency))
}

/// `host` serving on a loopback port of its own; a client of it.
fn serve(runtime: &tokio::runtime::Runtime, host: &Arc<Host>) -> anyhow::Result<Client> {
    let (ready, address) = std::sync::mpsc::channel();
    let serving = host.clone();
    runtime.spawn(async move {
        let options = ServeOptions { listen: Some("127.0.0.1:0".into()), insecure: false };
        let served =
            agent_host_serve::run(serving, options, move |listening| ready.send(listening.address).unwrap())
                .await;
        served.expect("serve runs");
    });
    let address: SocketAddr = address.recv_timeout(Duration::from_secs(30))?;
    Ok(Client::new(address))
}

/// The hosts a batch's sessions go through.
#[derive(Clone)]
struct Cluster {
    clients: Vec<Client>,
    /// Whether each session's message is posted to the host after the one it was made on.
    spread: bool,
}

impl Cluster {
    /// `sessions` workflows, `concurrency` at a time; the first failure is the batch's.
    async fn batch(&self, sessions: usize, concurrency: usize) -> anyhow::Result<()> {
        let next = AtomicUsize::new(0);
        let workers = (0..concurrency).map(|_| async {
            loop {
                let session = next.fetch_add(1, Ordering::Relaxed);
                if session >= sessions {
                    return anyhow::Ok(());
                }
                let made_on = &self.clients[session % self.clients.len()];
                let posted_to = &self.clients[(session + usize::from(self.spread)) % self.clients.len()];
                made_on.one_session(posted_to).await?;
            }
        });
        futures_util::future::try_join_all(workers).await?;
        Ok(())
    }
}

#[derive(Clone)]
struct Client {
    base: String,
    http: reqwest::Client,
}

impl Client {
    fn new(address: SocketAddr) -> Self {
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(agent_host::tls::client_config())
            .pool_max_idle_per_host(256)
            .build()
            .expect("an HTTP client");
        Self { base: format!("http://{address}"), http }
    }

    async fn new_session(&self) -> anyhow::Result<String> {
        let created: Value = self
            .http
            .post(format!("{}/v1/sessions", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        Ok(created["id"].as_str().unwrap_or_default().to_owned())
    }

    async fn open_stream(&self, id: &str) -> anyhow::Result<reqwest::Response> {
        let url = format!("{}/v1/sessions/{id}/events", self.base);
        Ok(self.http.get(url).bearer_auth(TOKEN).send().await?.error_for_status()?)
    }

    /// One workflow made and streamed here, its message posted to `posted_to`: the stream is
    /// open before the message is posted, so nothing is missed.
    async fn one_session(&self, posted_to: &Client) -> anyhow::Result<()> {
        let id = self.new_session().await?;
        let mut stream = self.open_stream(&id).await?;
        let url = format!("{}/v1/sessions/{id}/messages", posted_to.base);
        let message = serde_json::json!({ "text": "Plan four steps, then do them." });
        posted_to.http.post(url).bearer_auth(TOKEN).json(&message).send().await?.error_for_status()?;
        let mut pending = Vec::new();
        let mut todos: Option<Value> = None;
        while let Some(chunk) = stream.chunk().await? {
            pending.extend_from_slice(&chunk);
            while let Some(end) = pending.iter().position(|&byte| byte == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let Some(data) = line.strip_prefix(b"data: ") else { continue };
                let event: Value = serde_json::from_slice(data)?;
                match event["type"].as_str() {
                    Some("plugin") if event["kind"] == "todos-changed" => {
                        todos = Some(event["payload"]["items"].clone())
                    }
                    Some("turn_ended") => {
                        anyhow::ensure!(event["reason"] == "done", "session {id} ended {event}");
                        let items = todos.as_ref().and_then(Value::as_array).cloned().unwrap_or_default();
                        anyhow::ensure!(
                            items.len() == 4 && items.iter().all(|item| item["isComplete"] == true),
                            "session {id} ended with todos {items:?}"
                        );
                        return Ok(());
                    }
                    _ => {}
                }
            }
        }
        anyhow::bail!("session {id}: the stream ended before turn_ended")
    }

    /// `count` streams held open on idle sessions: the process's memory before, once they
    /// are open, and after a batch of sessions run beside them.
    async fn held_streams(&self, count: usize, concurrency: usize) -> anyhow::Result<()> {
        let mut ids = Vec::with_capacity(count);
        for _ in 0..count {
            ids.push(self.new_session().await?);
        }
        let (before, _) = memory_kib();
        let mut streams = Vec::with_capacity(count);
        for id in &ids {
            streams.push(self.open_stream(id).await?);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let (open, _) = memory_kib();
        Cluster { clients: vec![self.clone()], spread: false }.batch(500, concurrency).await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let (after, peak) = memory_kib();
        println!(
            "{count} event streams held open on idle sessions: RSS {} MiB before, {} MiB with them open \
             ({:.1} KiB each, server and client together), {} MiB after 500 sessions run beside them (peak {} MiB)",
            before >> 10,
            open >> 10,
            open.saturating_sub(before) as f64 / count as f64,
            after >> 10,
            peak >> 10
        );
        drop(streams);
        Ok(())
    }
}
