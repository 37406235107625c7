//! Load benchmark: the real host with the stock plugins (todo, agent-mode, permissions, fs)
//! against a fake model endpoint on loopback that answers at once. Every session is a full
//! todo workflow: add four todos, complete them one by one, final answer (six model calls,
//! five tool calls). Prints throughput, host overhead per model call and memory.
//!
//! `cargo bench -p agent-host --bench load` (defaults), or with figures of your own:
//! `cargo bench -p agent-host --bench load -- --serial 1000 --sessions 100000 --concurrency 50`.
//! `--provider anthropic` runs the same workflow through the Messages client (the endpoint
//! speaks both), for the host overhead per model call of each client.
//! `--long-session N` instead drives sessions one at a time until each history holds N
//! messages, for the host overhead per model call as the history grows (`long_session.rs`).
//! `--serve` drives the workflow through `agent-host serve` beside the library path
//! (`through_serve.rs`); with `--store postgres` on a real PostgreSQL on loopback (the tests'
//! server) in place of the SQLite file, and `--hosts N` through N `serve` hosts in this
//! process sharing that database.

// Bench code: a failed unwrap is a failed run (clippy.toml's test allowance reaches only tests).
#![allow(clippy::unwrap_used)]

mod endpoint;
mod long_session;
mod options;
mod startup;
mod stock_plugins;
mod targets;
#[path = "../../../host/src/state/postgres/test_server.rs"]
#[allow(dead_code)]
mod test_server;
mod through_serve;
mod timing;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_host::agent::NoOperator;
use agent_host::model::ModelClient;
use agent_host::plugins::Export;
use agent_host::{Config, Host, TurnEnd};
use endpoint::Wire;
use hdrhistogram::Histogram;
use options::Options;
use timing::{Breakdown, TimingSink, cpu_time, memory_kib, quantile};

const KEY_VARIABLE: &str = "AGENT_HOST_BENCH_KEY";
/// Holds the PostgreSQL password, with `--store postgres`.
const DATABASE_PASSWORD_VARIABLE: &str = "AGENT_HOST_BENCH_DB_PASSWORD";

/// Allocates as the binary does (`cli/src/main.rs`), so the bench measures what it runs.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: agent_host_cli::allocator::MiMalloc = agent_host_cli::allocator::MiMalloc;

/// What a batch of sessions measured.
struct Batch {
    completed: usize,
    failures: Vec<String>,
    /// Host overhead per model call, in µs. A histogram of fixed size rather than every
    /// sample, so that a 100,000-session run measures the host's memory, not the bench's.
    overheads: Histogram<u64>,
    breakdown: Breakdown,
}

impl Default for Batch {
    fn default() -> Self {
        // Two significant figures (1%) from 1 µs to a minute: a few KiB.
        let overheads = Histogram::new_with_bounds(1, 60_000_000, 2).expect("valid histogram bounds");
        Self { completed: 0, failures: Vec::new(), overheads, breakdown: Breakdown::default() }
    }
}

impl Batch {
    /// Adds another batch's sessions to this one.
    fn absorb(&mut self, other: Batch) {
        self.completed += other.completed;
        self.failures.extend(other.failures);
        self.overheads.add(&other.overheads).expect("histograms with the same bounds");
        self.breakdown += other.breakdown;
    }

    fn record(&mut self, overheads: &[Duration]) {
        for overhead in overheads {
            self.overheads.saturating_record(overhead.as_micros().max(1) as u64);
        }
    }

    fn overhead(&self, quantile: f64) -> Duration {
        Duration::from_micros(self.overheads.value_at_quantile(quantile))
    }
}

fn main() -> anyhow::Result<()> {
    let options = Options::parse();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let built = if options.prebuilt {
        last_built(&root.join("plugins"))?
    } else {
        agent_host::plugins::build_workspace(
            &root.join("plugins"),
            &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
        )?
    };
    let dir = tempfile::tempdir()?;
    std::fs::create_dir(dir.path().join("workspace"))?;
    set_bench_key();
    let cache = options.compile_cache.clone().unwrap_or_else(|| dir.path().join("cache"));
    if let Some(messages) = options.long_session {
        return long_session::run(dir.path(), &cache, &built, options.wire, messages);
    }
    let base_url = endpoint::start(Arc::default());
    let storage = if options.postgres {
        Storage::Postgres(test_server::TestServer::fresh_database())
    } else {
        anyhow::ensure!(
            options.hosts == 1,
            "--hosts needs --store postgres: hosts share a SQLite file only on one machine"
        );
        Storage::Sqlite
    };
    let (runtime, host, config_path) =
        start_host(dir.path(), &cache, &base_url, options.wire, &built, &storage)?;
    if options.serve {
        let mut hosts = vec![host];
        for _ in 1..options.hosts {
            hosts.push(runtime.block_on(host_from(&config_path))?);
        }
        return through_serve::run(&runtime, &hosts, &storage, options.sessions, options.concurrency);
    }
    anyhow::ensure!(options.hosts == 1, "--hosts needs --serve");

    let mut figures = targets::Figures::default();
    println!(
        "agent-host load benchmark: stock plugins (todo, agent-mode, permissions, fs), {} store, the {} client\n",
        storage.name(),
        options.wire.provider()
    );
    let startup_runs: &[_] =
        if options.startup { &[("cold (empty compile cache)", 5, true), ("warm", 20, false)] } else { &[] };
    for &(label, runs, cold) in startup_runs {
        let times = startup::measure(&config_path, &cache, runs, cold)?;
        if !cold {
            figures.warm_start = Some(quantile(&times, 0.5));
        }
        println!(
            "start-up to ready, {label}: median {:.0} ms, fastest {:.0} ms ({runs} runs of `agent-host --check`)",
            millis(quantile(&times, 0.5)),
            millis(times[0])
        );
    }
    println!();
    println!(
        "each session: {} model calls, {} tool calls; fake endpoint on loopback answers at once\n",
        endpoint::MODEL_CALLS_PER_SESSION,
        endpoint::TOOL_CALLS_PER_SESSION
    );
    runtime.block_on(run_batch(&host, 200, 4));
    let floor = runtime.block_on(endpoint::round_trips(&base_url, options.wire, 2_000));
    let floor_p50 = quantile(&floor, 0.5);
    println!(
        "endpoint round trip alone (same HTTP client, no host work): p50 {:.0} µs, p99 {:.0} µs;\n  \
         so one at a time no host could exceed {:.0} sessions/s here\n",
        micros(floor_p50),
        micros(quantile(&floor, 0.99)),
        1.0 / (floor_p50.as_secs_f64() * endpoint::MODEL_CALLS_PER_SESSION as f64)
    );
    if options.sessions > 0 {
        let calls = 20_000;
        let per_second = runtime.block_on(endpoint::round_trips_per_second(
            &base_url,
            options.wire,
            calls,
            options.concurrency,
        ));
        println!(
            "endpoint alone at concurrency {} ({calls} round trips, same HTTP client, no host work): \
             {per_second:.0} model calls/s;\n  so at that concurrency no host could exceed {:.0} sessions/s here\n",
            options.concurrency,
            per_second / endpoint::MODEL_CALLS_PER_SESSION as f64
        );
    }
    let (rss_before, _) = memory_kib();

    let mut failed = 0;
    for (label, sessions, concurrency) in
        [("one at a time", options.serial, 1), ("concurrent", options.sessions, options.concurrency)]
    {
        if sessions == 0 {
            continue;
        }
        let started = Instant::now();
        let cpu_before = cpu_time(endpoint::THREAD);
        let calls_before = plugin_calls(&host);
        let instances_before = plugin_instances(&host);
        let batch = if sessions >= LONG_RUN {
            long_run(&runtime, &host, sessions, concurrency)
        } else {
            runtime.block_on(run_batch(&host, sessions, concurrency))
        };
        let throughput = report(label, concurrency, started.elapsed(), batch, &mut failed);
        let model_calls = (sessions as u64 * endpoint::MODEL_CALLS_PER_SESSION) as f64;
        let calls: Vec<String> = Export::ALL
            .into_iter()
            .zip(plugin_calls(&host).into_iter().zip(calls_before))
            .filter(|(_, (after, before))| after > before)
            .map(|(export, (after, before))| {
                format!("{} {:.2}", export.wit_name(), (after - before) as f64 / model_calls)
            })
            .collect();
        println!("  plugin calls per model call (the rest reused or filtered out): {}", calls.join(", "));
        let instances = plugin_instances(&host) - instances_before;
        println!("  plugin instances per model call: {:.2}", instances as f64 / model_calls);
        let (cpu, endpoint_cpu) = cpu_time(endpoint::THREAD);
        let (cpu, endpoint_cpu) = (cpu - cpu_before.0, endpoint_cpu - cpu_before.1);
        println!(
            "  CPU per model call: {:.0} µs in the host (every thread but the endpoint's), {:.0} µs in the endpoint",
            micros(cpu - endpoint_cpu) / model_calls,
            micros(endpoint_cpu) / model_calls
        );
        if concurrency == 1 {
            figures.serial = Some(throughput);
            // The overhead above starts at the request event; building the body, the HTTP
            // client and reading the reply fall on the model's side of it. This line charges
            // the host with everything but the endpoint's bare round trip.
            let per_call = started.elapsed().as_secs_f64()
                / (sessions as f64 * endpoint::MODEL_CALLS_PER_SESSION as f64);
            println!(
                "  all-in host cost per model call (wall time per call minus the bare round trip): {:.0} µs",
                per_call * 1e6 - micros(floor_p50)
            );
        } else {
            figures.concurrent = Some((concurrency, throughput));
        }
    }

    let (rss_after, peak) = memory_kib();
    let idle = options.serial + options.sessions;
    println!(
        "memory: peak RSS {} MiB; RSS {} MiB after warm-up, {} MiB after {idle} more sessions",
        peak >> 10,
        rss_before >> 10,
        rss_after >> 10
    );
    let kib_per_idle_session = rss_after.saturating_sub(rss_before) as f64 / idle.max(1) as f64;
    println!(
        "        growth per idle session: {kib_per_idle_session:.2} KiB (sessions live in SQLite; none is held in memory)"
    );
    figures.kib_per_idle_session = Some(kib_per_idle_session);
    // The WAL file keeps the size of its longest run between restarts: whether the background
    // checkpoint lets it restart under load, or it grows to the fallback (16,000 pages).
    let wal = std::fs::metadata(dir.path().join("sessions.db-wal")).map_or(0, |meta| meta.len());
    println!("        SQLite WAL file: {:.1} MiB at its largest", wal as f64 / (1 << 20) as f64);
    targets::print(&figures);
    anyhow::ensure!(failed == 0, "{failed} sessions failed");
    Ok(())
}

/// Calls made so far to each export, summed over the loaded plugins.
fn plugin_calls(host: &Host) -> [u64; Export::ALL.len()] {
    let set = host.plugins();
    Export::ALL.map(|export| set.plugins().iter().map(|plugin| plugin.calls().get(export)).sum())
}

/// Instances made for calls so far, summed over the loaded plugins.
fn plugin_instances(host: &Host) -> u64 {
    host.plugins().plugins().iter().map(|plugin| plugin.calls().instances()).sum()
}

/// From this many sessions on, a phase runs in tenths with throughput and memory printed
/// after each, so drift (slower sessions, growing memory) shows.
const LONG_RUN: usize = 20_000;

fn long_run(
    runtime: &tokio::runtime::Runtime,
    host: &Arc<Host>,
    sessions: usize,
    concurrency: usize,
) -> Batch {
    let tenth = sessions / 10;
    let mut total = Batch::default();
    for part in 1..=10 {
        let count = if part == 10 { sessions - 9 * tenth } else { tenth };
        let started = Instant::now();
        let batch = runtime.block_on(run_batch(host, count, concurrency));
        let (rss, _) = memory_kib();
        println!(
            "  {:>3}% done: {:.0} sessions/s over the last tenth, RSS {} MiB",
            part * 10,
            batch.completed as f64 / started.elapsed().as_secs_f64(),
            rss >> 10
        );
        total.absorb(batch);
    }
    total
}

fn report(
    label: &str,
    concurrency: usize,
    elapsed: Duration,
    batch: Batch,
    failed: &mut usize,
) -> targets::Throughput {
    let seconds = elapsed.as_secs_f64();
    println!("{label} (concurrency {concurrency}): {} sessions in {seconds:.2} s", batch.completed);
    println!(
        "  {:.0} sessions/s, {:.0} model calls/s",
        batch.completed as f64 / seconds,
        (batch.completed as u64 * endpoint::MODEL_CALLS_PER_SESSION) as f64 / seconds
    );
    println!(
        "  host overhead per model call: p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        micros(batch.overhead(0.50)),
        micros(batch.overhead(0.99)),
        micros(batch.overhead(1.0)),
    );
    let per_call = |total: Duration| micros(total) / batch.overheads.len().max(1) as f64;
    println!(
        "  where it goes, per model call: {:.0} µs storing the reply and pre-tool hooks, {:.0} µs in tools and \
         post-tool hooks, {:.0} µs storing results and assembling the next call",
        per_call(batch.breakdown.reply_to_tool),
        per_call(batch.breakdown.in_tools),
        per_call(batch.breakdown.tool_to_request),
    );
    println!("  failed sessions: {}", batch.failures.len());
    for failure in batch.failures.iter().take(5) {
        println!("    {failure}");
    }
    *failed += batch.failures.len();
    targets::Throughput {
        sessions_per_second: batch.completed as f64 / seconds,
        overhead_p50: batch.overhead(0.50),
        overhead_p99: batch.overhead(0.99),
    }
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// Runs `sessions` workflows, `concurrency` at a time.
async fn run_batch(host: &Arc<Host>, sessions: usize, concurrency: usize) -> Batch {
    let next = Arc::new(AtomicUsize::new(0));
    let total = Arc::new(Mutex::new(Batch::default()));
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (host, next, total) = (host.clone(), next.clone(), total.clone());
            tokio::spawn(async move {
                let mut batch = Batch::default();
                while next.fetch_add(1, Ordering::Relaxed) < sessions {
                    match one_session(&host).await {
                        Ok((overheads, breakdown)) => {
                            batch.completed += 1;
                            batch.record(&overheads);
                            batch.breakdown += breakdown;
                        }
                        Err(error) => batch.failures.push(format!("{error:#}")),
                    }
                }
                let mut total = total.lock().unwrap();
                total.absorb(batch);
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("a worker panicked");
    }
    Arc::try_unwrap(total).ok().expect("workers are done").into_inner().unwrap()
}

/// One full todo workflow in a new session; checks it ended with every todo complete.
async fn one_session(host: &Host) -> anyhow::Result<(Vec<Duration>, Breakdown)> {
    let sink = TimingSink::default();
    let start = Instant::now();
    let handle = host.sessions().create()?;
    let mut session = handle.lock().await;
    let outcome = host.run_turn(&mut session, "Plan four steps, then do them.", &sink, &NoOperator).await?;
    let end = Instant::now();
    anyhow::ensure!(
        outcome.end == TurnEnd::Done && u64::from(outcome.iterations) == endpoint::MODEL_CALLS_PER_SESSION,
        "session {} ended {:?} after {} model calls",
        session.id(),
        outcome.end,
        outcome.iterations
    );
    let items = session.bag().get_json("todo", "items").unwrap_or_default();
    let items = items.as_array().map(Vec::as_slice).unwrap_or_default();
    anyhow::ensure!(
        items.len() == 4 && items.iter().all(|item| item["isComplete"] == true),
        "session {} ended with todos {items:?}",
        session.id()
    );
    Ok((sink.overhead_per_model_call(start, end), sink.breakdown()))
}

/// Where the bench's sessions are stored.
enum Storage {
    /// `sessions.db` beside the config.
    Sqlite,
    /// A fresh database on the tests' PostgreSQL server, at this URL.
    Postgres(String),
}

impl Storage {
    fn name(&self) -> &'static str {
        match self {
            Storage::Sqlite => "SQLite",
            Storage::Postgres(_) => "PostgreSQL",
        }
    }

    /// The config's `[storage]` table.
    fn table(&self) -> String {
        match self {
            Storage::Sqlite => "[storage]\npath = \"sessions.db\"\n".to_owned(),
            Storage::Postgres(url) => {
                format!("[storage]\nurl = \"{url}\"\npassword_env = \"{DATABASE_PASSWORD_VARIABLE}\"\n")
            }
        }
    }
}

/// The host on the stock set against the endpoint at `base_url`, its config written into
/// `dir` and its compiled plugins kept in `cache`, on a runtime of two workers.
fn start_host(
    dir: &Path,
    cache: &Path,
    base_url: &str,
    wire: Wire,
    built: &BTreeMap<String, PathBuf>,
    storage: &Storage,
) -> anyhow::Result<(tokio::runtime::Runtime, Arc<Host>, PathBuf)> {
    let config_path = dir.join("config.toml");
    std::fs::write(&config_path, config_text(base_url, wire, built, storage, cache))?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let host = runtime.block_on(host_from(&config_path))?;
    Ok((runtime, host, config_path))
}

/// A host of the deployment at `config_path`: its own plugin set, model client and store
/// connections, as a host on another machine would have.
async fn host_from(config_path: &Path) -> anyhow::Result<Arc<Host>> {
    let config = Config::load(config_path)?;
    let model = ModelClient::from_config(&config)?.expect("an endpoint is configured");
    Ok(Arc::new(Host::new(config, model).await?))
}

#[allow(unsafe_code)]
fn set_bench_key() {
    // SAFETY: called from `main` before the runtime, the endpoint or any other thread starts.
    unsafe {
        std::env::set_var(KEY_VARIABLE, "bench-key");
        std::env::set_var(through_serve::TOKEN_VARIABLE, through_serve::TOKEN);
        std::env::set_var(DATABASE_PASSWORD_VARIABLE, test_server::PASSWORD);
    }
}

fn config_text(
    base_url: &str,
    wire: Wire,
    built: &BTreeMap<String, PathBuf>,
    storage: &Storage,
    cache: &Path,
) -> String {
    let provider = wire.provider();
    format!(
        r#"
[model]
provider = "{provider}"
base_url = "{base_url}"
api_key_env = "{KEY_VARIABLE}"
max_retries = 0

{storage}
[runtime]
cache_dir = {cache}

[serve]
tokens = {{ bench = "{token}" }}
max_turns_per_principal = 1000
# The bench's one principal makes every session of every phase.
max_sessions_per_principal = 1000000
# 1,000 streams held open beside a batch, all from loopback: past the defaults' caps.
max_connections = 4096
max_connections_per_peer = 4096
{plugins}"#,
        plugins = stock_plugins::plugin_tables(built),
        token = through_serve::TOKEN_VARIABLE,
        storage = storage.table(),
        cache = toml::Value::String(cache.display().to_string()),
    )
}

/// The stock set's components where the last build of the plugins workspace in `plugins`
/// left them, by plugin name; an error names the first one missing.
fn last_built(plugins: &std::path::Path) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    ["todo", "agent-mode", "permissions", "fs"]
        .into_iter()
        .map(|name| {
            let file =
                plugins.join("target/wasm32-wasip2/release").join(format!("{}.wasm", name.replace('-', "_")));
            anyhow::ensure!(
                file.is_file(),
                "--prebuilt: {} is missing; run the bench once without it",
                file.display()
            );
            Ok((name.to_owned(), file))
        })
        .collect()
}
