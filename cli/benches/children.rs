//! What a child agent (contract 0.2.8) costs the host, against a plain tool call: one turn
//! whose reply calls `todos_get_all` (a plain tool), against one whose reply calls the stock
//! `subagents` plugin's `task` (a child session with one model call), on a fake endpoint that
//! answers at once: host CPU and wall per turn, and store writes per turn. Then four children
//! started in one reply (they run at once) against four started one reply after another, on
//! an endpoint that takes `--latency-ms` to answer each call.
//!
//! `cargo bench -p agent-host-cli --bench children` or
//! `cargo bench -p agent-host-cli --bench children -- --turns 200 --latency-ms 200`.

// Bench code: a failed unwrap is a failed run.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agent_host::agent::NoOperator;
use agent_host::events::NoEvents;
use agent_host::model::ModelClient;
use agent_host::state::lease::{Holder, LeaseAnswer, Taken};
use agent_host::state::{SessionEntry, SessionStore, Step, StoreError, StoreFuture, StoredSession};
use agent_host::{Config, Host, TurnEnd};
use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

/// The endpoint's script: what the parent's reply holds, by the prompt's first word.
async fn reply(State(latency): State<Duration>, Json(request): Json<Value>) -> Json<Value> {
    tokio::time::sleep(latency).await;
    let messages = request["messages"].as_array().unwrap();
    let prompt =
        messages.iter().find(|m| m["role"] == "user").unwrap()["content"].as_str().unwrap().to_owned();
    let results = messages.iter().filter(|m| m["role"] == "tool").count();
    let call = |name: &str, arguments: Value, n: usize| {
        json!({"id": format!("c{results}-{n}"), "type": "function",
               "function": {"name": name, "arguments": arguments.to_string()}})
    };
    let task = |n: usize| call("task", json!({"agent": "helper", "prompt": format!("part {n}")}), n);
    let calls: Vec<Value> = match (request["model"].as_str(), prompt.split_whitespace().next()) {
        (Some("child"), _) => Vec::new(),
        (_, Some("plain")) if results == 0 => vec![call("todos_get_all", json!({}), 0)],
        (_, Some("child")) if results == 0 => vec![task(0)],
        (_, Some("parallel")) if results == 0 => (0..4).map(task).collect(),
        (_, Some("serial")) if results < 4 => vec![task(results)],
        _ => Vec::new(),
    };
    let message = if calls.is_empty() {
        json!({"role": "assistant", "content": "done"})
    } else {
        json!({"role": "assistant", "content": null, "tool_calls": calls})
    };
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    Json(json!({"choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 2}}))
}

/// The endpoint on its own thread and runtime, so the host's runtime does the host's work.
fn endpoint(latency: Duration) -> String {
    let listener = std::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new()
                .route("/v1/chat/completions", axum::routing::post(reply))
                .with_state(latency);
            axum::serve(tokio::net::TcpListener::from_std(listener).unwrap(), app).await.unwrap();
        });
    });
    format!("http://{address}/v1")
}

/// The SQLite store, counting the writes that make a step or a session durable.
struct Counted {
    inner: Arc<dyn SessionStore>,
    writes: AtomicU64,
}

impl Counted {
    fn wrote(&self) {
        self.writes.fetch_add(1, Ordering::Relaxed);
    }
}

impl SessionStore for Counted {
    fn create(&self, id: &str, holder: &Holder, claim: &str, expires_at: i64) -> Result<Taken, StoreError> {
        self.wrote();
        self.inner.create(id, holder, claim, expires_at)
    }
    fn create_copy(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        contents: &StoredSession,
        last_used: Option<i64>,
    ) -> Result<Taken, StoreError> {
        self.wrote();
        self.inner.create_copy(id, holder, claim, expires_at, contents, last_used)
    }
    fn lease(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        replacing: Option<&str>,
    ) -> Result<LeaseAnswer, StoreError> {
        self.inner.lease(id, holder, claim, expires_at, replacing)
    }
    fn renew_leases(&self, token: &str, expires_at: i64) -> Result<(), StoreError> {
        self.inner.renew_leases(token, expires_at)
    }
    fn release_lease(&self, id: &str, claim: &str) -> Result<(), StoreError> {
        self.inner.release_lease(id, claim)
    }
    fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        self.inner.load(id)
    }
    fn commit(&self, id: &str, step: Step<'_>) -> Result<(), StoreError> {
        self.wrote();
        self.inner.commit(id, step)
    }
    fn commit_async<'a>(&'a self, id: &'a str, step: Step<'a>) -> StoreFuture<'a, ()> {
        self.wrote();
        self.inner.commit_async(id, step)
    }
    fn list(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        self.inner.list(limit)
    }
    fn entries(&self, limit: usize) -> Result<Vec<SessionEntry>, StoreError> {
        self.inner.entries(limit)
    }
    fn entries_owned(&self, owner: &str, limit: usize) -> Result<Vec<SessionEntry>, StoreError> {
        self.inner.entries_owned(owner, limit)
    }
    fn count_owned(&self, owner: &str, up_to: usize) -> Result<usize, StoreError> {
        self.inner.count_owned(owner, up_to)
    }
    fn state_value(&self, id: &str, namespace: &str, key: &str) -> Result<Option<String>, StoreError> {
        self.inner.state_value(id, namespace, key)
    }
    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete(id)
    }
}

/// A host on `url` with the stock todo and subagents plugins (one agent, `helper`, on the
/// endpoint's model `child`), its store counted.
async fn start_host(dir: &std::path::Path, url: &str) -> (Host, Arc<Counted>) {
    std::fs::create_dir_all(dir.join("agents")).unwrap();
    std::fs::write(
        dir.join("agents/helper.md"),
        "---\nname: helper\ndescription: Helps.\ntools: []\nmodel: child\n---\nYou help.\n",
    )
    .unwrap();
    let config = format!(
        "[agent]\nmax_iterations = 10\n\n[model]\nbase_url = \"{url}\"\nmodel = \"parent\"\napi_key_env = \"AGENT_HOST_BENCH_KEY\"\n\n\
         [storage]\npath = \"sessions.db\"\n\n\
         [[plugin]]\nbuiltin = \"todo\"\n\n\
         [[plugin]]\nbuiltin = \"sub{}\"\n[plugin.config]\ndirs = [\"/agents\"]\n[plugin.grants]\nagents = true\n\
         [plugin.grants.dirs]\n\"/agents\" = {{ host = \"agents\" }}\n",
        "agents"
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, config).unwrap();
    let config = Config::load(&path).unwrap();
    let model = ModelClient::from_config(&config).unwrap().unwrap();
    let store = Arc::new(Counted {
        inner: agent_host::state::open_store(&config).unwrap(),
        writes: AtomicU64::new(0),
    });
    let host = Host::with_store(config, model, store.clone()).await.unwrap();
    (host, store)
}

/// Host CPU (process less the endpoint's thread is not told apart here: the endpoint's work
/// is the same in both runs) and wall per turn, and store writes per turn.
struct Figures {
    cpu_us: f64,
    wall_us: f64,
    writes: f64,
}

async fn turns(host: &Host, store: &Counted, prompt: &str, count: u32) -> Figures {
    let writes = store.writes.load(Ordering::Relaxed);
    let (cpu, started) = (cpu_time(), Instant::now());
    for _ in 0..count {
        let handle = host.sessions().create().unwrap();
        let mut session = handle.lock().await;
        let outcome = host.run_turn(&mut session, prompt, &NoEvents, &NoOperator).await.unwrap();
        assert_eq!(outcome.end, TurnEnd::Done, "{prompt}: {outcome:?}");
    }
    let per = |total: f64| total / f64::from(count);
    Figures {
        cpu_us: per((cpu_time() - cpu).as_secs_f64() * 1e6),
        wall_us: per(started.elapsed().as_secs_f64() * 1e6),
        writes: per((store.writes.load(Ordering::Relaxed) - writes) as f64),
    }
}

/// User and system time of this process.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

fn argument(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.windows(2).find(|pair| pair[0] == name).map_or(default, |pair| pair[1].parse().unwrap())
}

#[allow(unsafe_code)]
fn set_bench_key() {
    // SAFETY: called from `main` before the runtime, the endpoint or any other thread starts.
    unsafe { std::env::set_var("AGENT_HOST_BENCH_KEY", "bench-key") };
}

fn main() {
    set_bench_key();
    let turns_each = u32::try_from(argument("--turns", 200)).unwrap();
    let latency = Duration::from_millis(argument("--latency-ms", 200));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let (host, store) = start_host(dir.path(), &endpoint(Duration::ZERO)).await;
        // Warm: every component compiled and instantiated once.
        turns(&host, &store, "plain", 5).await;
        turns(&host, &store, "child", 5).await;
        println!("{turns_each} turns each, endpoint answering at once, alternating in rounds of 20:");
        let (mut plain, mut child) = (Vec::new(), Vec::new());
        for _ in 0..turns_each / 20 {
            plain.push(turns(&host, &store, "plain", 20).await);
            child.push(turns(&host, &store, "child", 20).await);
        }
        for (name, runs) in [("plain tool call (todos_get_all)", &plain), ("one child (task)", &child)] {
            let mean = |get: fn(&Figures) -> f64| runs.iter().map(get).sum::<f64>() / runs.len() as f64;
            println!(
                "  {name:<28} CPU {:>7.0} µs/turn  wall {:>7.0} µs/turn  store writes {:.1}/turn",
                mean(|f| f.cpu_us),
                mean(|f| f.wall_us),
                mean(|f| f.writes)
            );
        }

        let dir = tempfile::tempdir().unwrap();
        let (host, store) = start_host(dir.path(), &endpoint(latency)).await;
        turns(&host, &store, "parallel", 1).await;
        println!("four children, endpoint answering each call in {} ms:", latency.as_millis());
        for prompt in ["parallel", "serial", "parallel", "serial"] {
            let figures = turns(&host, &store, prompt, 3).await;
            let how = if prompt == "parallel" { "in one reply (at once)" } else { "one reply after another" };
            println!("  {how:<26} wall {:>6.0} ms/turn", figures.wall_us / 1000.0);
        }
    });
}
