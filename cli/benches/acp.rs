//! One prompt's host overhead through ACP beside the library: the load bench's todo workflow
//! (add four todos, complete them one by one, final answer: six model calls, five tool calls)
//! against its endpoint that answers at once, run as `Host::run_turn` on a fresh session, and
//! as `session/new` + `session/prompt` sent to `agent-host acp` over its stdio by a minimal
//! JSON-RPC client here. Both on the stock set, one prompt at a time. Prints wall time per
//! prompt and CPU per prompt: the library's is this process less the endpoint's thread, the
//! agent's is the child's own, so the difference is what the ACP front end adds. Then the
//! same through two agents, one exporting traces (`[telemetry]`, to a collector here that
//! keeps nothing) and one not, prompted in turn, one prompt each: what tracing costs.
//!
//! `cargo bench -p agent-host --bench acp` (or `-- --prompts N`).

// Bench code: a failed unwrap is a failed run (clippy.toml's test allowance reaches only tests).
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "load/endpoint.rs"]
mod endpoint;
#[path = "load/otlp_sink.rs"]
mod otlp_sink;
#[path = "load/stock_plugins.rs"]
mod stock_plugins;
#[allow(dead_code)]
#[path = "load/timing.rs"]
mod timing;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_host::agent::NoOperator;
use agent_host::events::NoEvents;
use agent_host::model::ModelClient;
use agent_host::{Config, Host, TurnEnd};
use anyhow::Context as _;
use serde_json::{Value, json};
use timing::{cpu_time, quantile};

/// Allocates as the binary does (`cli/src/main.rs`), so the bench measures what it runs.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: agent_host_cli::allocator::MiMalloc = agent_host_cli::allocator::MiMalloc;

const KEY_VARIABLE: &str = "AGENT_HOST_BENCH_KEY";
const PROMPT: &str = "Plan four steps, then do them.";
const WARM_UP: usize = 50;

fn main() -> anyhow::Result<()> {
    let prompts = prompts_option();
    set_bench_key();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let built = agent_host::plugins::build_workspace(
        &root.join("plugins"),
        &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
    )?;
    let dir = tempfile::tempdir()?;
    std::fs::create_dir(dir.path().join("workspace"))?;
    let base_url = endpoint::start(Arc::default());
    // Two deployments on one compile cache, each with its own database, so neither path
    // waits on the other's SQLite.
    let library_config = dir.path().join("library.toml");
    let acp_config = dir.path().join("acp.toml");
    std::fs::write(&library_config, config_text(&base_url, "library.db", &built))?;
    std::fs::write(&acp_config, config_text(&base_url, "acp.db", &built))?;

    println!(
        "agent-host ACP benchmark: stock plugins, the todo workflow (6 model calls, 5 tool calls) per prompt, \
         {prompts} prompts one at a time\n"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let library = runtime.block_on(library_path(&library_config, prompts))?;
    drop(runtime);
    library.print("library (Host::run_turn)");
    let acp = acp_path(&acp_config, dir.path(), prompts)?;
    acp.print("ACP (agent-host acp, stdio)");
    println!(
        "\nACP's own cost per prompt: {:+.0} µs wall (median), {:+.0} µs CPU",
        micros(acp.median()) - micros(library.median()),
        micros(acp.cpu_per_prompt()) - micros(library.cpu_per_prompt())
    );

    let (sink, taken) = otlp_sink::start();
    let traced_config = dir.path().join("traced.toml");
    let traced =
        format!("{}\n[telemetry]\notlp_endpoint = \"{sink}\"\n", config_text(&base_url, "traced.db", &built));
    std::fs::write(&traced_config, traced)?;
    let untraced_config = dir.path().join("untraced.toml");
    std::fs::write(&untraced_config, config_text(&base_url, "untraced.db", &built))?;
    let (untraced, traced) = in_turn(&untraced_config, &traced_config, dir.path(), prompts)?;
    println!();
    untraced.print("ACP, traces off");
    traced.print("ACP, traces on ");
    println!(
        "tracing's cost per prompt: {:+.0} µs wall (median), {:+.0} µs CPU; the collector took {} requests, {} KiB",
        micros(traced.median()) - micros(untraced.median()),
        micros(traced.cpu_per_prompt()) - micros(untraced.cpu_per_prompt()),
        taken.requests.load(std::sync::atomic::Ordering::Relaxed),
        taken.bytes.load(std::sync::atomic::Ordering::Relaxed) / 1024,
    );
    Ok(())
}

#[allow(unsafe_code)]
fn set_bench_key() {
    // SAFETY: called from `main` before the runtime, the endpoint or any other thread starts.
    unsafe { std::env::set_var(KEY_VARIABLE, "bench-key") };
}

/// `--prompts N` (default 500); cargo's own `--bench` is ignored.
fn prompts_option() -> usize {
    let mut args = std::env::args().skip(1);
    let mut prompts = 500;
    while let Some(arg) = args.next() {
        if arg == "--prompts" {
            prompts = args.next().and_then(|v| v.parse().ok()).expect("--prompts needs a number");
        }
    }
    prompts.max(1)
}

/// Wall time of each prompt, sorted, and the CPU all of them took.
struct Figures {
    walls: Vec<Duration>,
    cpu: Duration,
}

impl Figures {
    fn median(&self) -> Duration {
        quantile(&self.walls, 0.5)
    }

    fn cpu_per_prompt(&self) -> Duration {
        self.cpu / self.walls.len() as u32
    }

    fn print(&self, label: &str) {
        println!(
            "{label}: wall per prompt median {:.0} µs, p99 {:.0} µs; CPU per prompt {:.0} µs",
            micros(self.median()),
            micros(quantile(&self.walls, 0.99)),
            micros(self.cpu_per_prompt())
        );
    }
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// The workflow as `Host::run_turn` on a fresh session, events to nowhere. CPU is this
/// process's less the endpoint's thread.
async fn library_path(config_path: &Path, prompts: usize) -> anyhow::Result<Figures> {
    let config = Config::load(config_path)?;
    let model = ModelClient::from_config(&config)?.context("an endpoint is configured")?;
    let host = Host::new(config, model).await?;
    let one = || async {
        let handle = host.sessions().create()?;
        let mut session = handle.lock().await;
        let outcome = host.run_turn(&mut session, PROMPT, &NoEvents, &NoOperator).await?;
        anyhow::ensure!(
            outcome.end == TurnEnd::Done
                && u64::from(outcome.iterations) == endpoint::MODEL_CALLS_PER_SESSION,
            "the library turn ended {:?} after {} model calls",
            outcome.end,
            outcome.iterations
        );
        anyhow::Ok(())
    };
    for _ in 0..WARM_UP {
        one().await?;
    }
    let (cpu_before, endpoint_before) = cpu_time(endpoint::THREAD);
    let mut walls = Vec::with_capacity(prompts);
    for _ in 0..prompts {
        let started = Instant::now();
        one().await?;
        walls.push(started.elapsed());
    }
    let (cpu_after, endpoint_after) = cpu_time(endpoint::THREAD);
    walls.sort_unstable();
    Ok(Figures { walls, cpu: (cpu_after - cpu_before) - (endpoint_after - endpoint_before) })
}

/// The workflow as `session/new` + `session/prompt` to `agent-host acp`, timed from the
/// first request written to the prompt's answer read. CPU is the child's own.
fn acp_path(config_path: &Path, cwd: &Path, prompts: usize) -> anyhow::Result<Figures> {
    let mut agent = Agent::start(config_path)?;
    agent.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}))?;
    for _ in 0..WARM_UP {
        agent.prompt(cwd)?;
    }
    let cpu_before = agent.cpu();
    let mut walls = Vec::with_capacity(prompts);
    for _ in 0..prompts {
        let started = Instant::now();
        agent.prompt(cwd)?;
        walls.push(started.elapsed());
    }
    let cpu = agent.cpu() - cpu_before;
    walls.sort_unstable();
    Ok(Figures { walls, cpu })
}

/// The workflow through two agents, `a` and `b`, prompted in turn (a b a b ...), so that the
/// machine's drift weighs on both alike.
fn in_turn(a: &Path, b: &Path, cwd: &Path, prompts: usize) -> anyhow::Result<(Figures, Figures)> {
    let mut agents = [Agent::start(a)?, Agent::start(b)?];
    for agent in &mut agents {
        agent.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}))?;
        for _ in 0..WARM_UP {
            agent.prompt(cwd)?;
        }
    }
    let cpu_before = agents.each_ref().map(Agent::cpu);
    let mut walls = [Vec::with_capacity(prompts), Vec::with_capacity(prompts)];
    for _ in 0..prompts {
        for (agent, walls) in agents.iter_mut().zip(&mut walls) {
            let started = Instant::now();
            agent.prompt(cwd)?;
            walls.push(started.elapsed());
        }
    }
    let [mut a_walls, mut b_walls] = walls;
    a_walls.sort_unstable();
    b_walls.sort_unstable();
    let a = Figures { walls: a_walls, cpu: agents[0].cpu() - cpu_before[0] };
    let b = Figures { walls: b_walls, cpu: agents[1].cpu() - cpu_before[1] };
    Ok((a, b))
}

/// `agent-host acp` as a child, and the JSON-RPC this bench speaks to it.
struct Agent {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

impl Agent {
    fn start(config_path: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agent-host"))
            .arg("acp")
            .arg("--config")
            .arg(config_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // Its log lines (warnings and errors only, by default) are the bench's too.
            .stderr(Stdio::inherit())
            .spawn()
            .context("start agent-host acp")?;
        let stdin = child.stdin.take().context("the agent's stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("the agent's stdout")?);
        Ok(Self { child, stdin, stdout, next_id: 0, line: String::new() })
    }

    /// Sends one request and reads up to its answer; the notifications before it are passed
    /// to `notified`. A request from the agent fails the bench: the workflow asks nothing.
    fn request_with(
        &mut self,
        method: &str,
        params: Value,
        mut notified: impl FnMut(&Value),
    ) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}")?;
        self.stdin.flush()?;
        loop {
            self.line.clear();
            anyhow::ensure!(
                self.stdout.read_line(&mut self.line)? > 0,
                "the agent closed its stdout during {method}"
            );
            let message: Value =
                serde_json::from_str(&self.line).context("the agent wrote a line that is not JSON")?;
            if message.get("method").is_some() {
                anyhow::ensure!(message.get("id").is_none(), "the agent asked something: {message}");
                notified(&message);
            } else if message["id"] == id {
                anyhow::ensure!(message.get("error").is_none(), "{method} failed: {message}");
                return Ok(message["result"].clone());
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.request_with(method, params, |_| {})
    }

    /// One workflow on a new session; checks it ended the turn with every todo done.
    fn prompt(&mut self, cwd: &Path) -> anyhow::Result<()> {
        let session = self.request("session/new", json!({"cwd": cwd, "mcpServers": []}))?;
        let session_id = session["sessionId"].clone();
        let mut plan = Value::Null;
        let prompt = json!({"sessionId": session_id, "prompt": [{"type": "text", "text": PROMPT}]});
        let answer = self.request_with("session/prompt", prompt, |message| {
            if message["params"]["update"]["sessionUpdate"] == "plan" {
                plan = message["params"]["update"]["entries"].clone();
            }
        })?;
        anyhow::ensure!(answer["stopReason"] == "end_turn", "the prompt ended {answer}");
        let entries = plan.as_array().map(Vec::as_slice).unwrap_or_default();
        anyhow::ensure!(
            entries.len() == 4 && entries.iter().all(|entry| entry["status"] == "completed"),
            "the plan at the end: {plan}"
        );
        Ok(())
    }

    /// The child's user + system time so far (Linux `/proc`).
    fn cpu(&self) -> Duration {
        timing::stat_cpu(Path::new(&format!("/proc/{}/stat", self.child.id())))
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The stock set (todo, agent-mode, permissions, fs) against the endpoint at `base_url`, as
/// the load bench configures it, with the database at `database`.
fn config_text(base_url: &str, database: &str, built: &BTreeMap<String, PathBuf>) -> String {
    format!(
        r#"
[model]
provider = "openai"
base_url = "{base_url}"
api_key_env = "{KEY_VARIABLE}"
max_retries = 0

[storage]
path = "{database}"

[runtime]
cache_dir = "cache"
{plugins}"#,
        plugins = stock_plugins::plugin_tables(built),
    )
}
