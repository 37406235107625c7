//! What a plugin costs by the language it is written in: the same plugin (`triage-modes`)
//! built from Rust, Python (componentize-py) and TypeScript (componentize-js's StarlingMonkey,
//! and QuickJS), each measured the same way through the host's own load path:
//!
//! - cold compile: a host starting on the component with an empty compile cache;
//! - warm start: a host starting on it with the compile cache filled at an earlier start;
//! - per call: one `advance_stage` tool call (a fresh instance, the call, its teardown);
//! - a source folder's load: an unchanged folder (its build kept by its source digest, its
//!   component in the compile cache) beside the same folder built anew and compiled cold,
//!   which is what every load of an unchanged Python or TypeScript folder cost before
//!   builds were kept by digest (their builds are not byte-identical).
//!
//! `cargo bench -p agent-host --bench plugin_languages -- [--rounds N] [--calls N] [--language L]`

// Bench code: a failed unwrap is a failed run (clippy.toml's test allowance reaches only tests).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_host::events::NoEvents;
use agent_host::model::ModelClient;
use agent_host::{Config, Host};
use serde_json::json;

/// Allocates as the binary does (`cli/src/main.rs`), so the bench measures what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Args {
    rounds: usize,
    calls: usize,
    /// Only this language's plugin, when given (`--language Python`).
    language: Option<String>,
}

fn args() -> Args {
    let mut parsed = Args { rounds: 3, calls: 200, language: None };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        let mut number = || words.next().and_then(|n| n.parse().ok()).expect("a number after the flag");
        match word.as_str() {
            "--rounds" => parsed.rounds = number(),
            "--calls" => parsed.calls = number(),
            "--language" => parsed.language = Some(words.next().expect("a language after --language")),
            // cargo bench passes `--bench`.
            _ => {}
        }
    }
    parsed
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("host/ sits in the repository").to_path_buf()
}

fn main() {
    let args = args();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let rust = agent_host::plugins::build_workspace(
        &repo().join("plugins"),
        &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
    )
    .expect("the plugins build");
    let wanted =
        |language: &str| args.language.as_deref().is_none_or(|wanted| wanted.eq_ignore_ascii_case(language));
    let mut components = vec![("Rust".to_owned(), rust["triage-modes"].clone())];
    components.retain(|(language, _)| wanted(language));
    let quickjs = quickjs_copy();
    let mut folders = vec![
        ("Python", repo().join("plugins/triage-modes-py")),
        ("TypeScript", repo().join("plugins/triage-modes-ts")),
        ("QuickJS", quickjs.path().to_path_buf()),
    ];
    folders.retain(|(language, _)| wanted(language));
    for (language, folder) in &folders {
        let built = agent_host::plugins::resolve_component(
            folder,
            &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
            &|_| {},
        )
        .unwrap_or_else(|error| panic!("building {}: {error}", folder.display()));
        components.push(((*language).to_owned(), built));
    }
    println!(
        "{:<12} {:>9} {:>15} {:>12} {:>12} {:>12}",
        "language", "size", "cold compile", "warm start", "call p50", "call mean"
    );
    for (language, component) in &components {
        let size = std::fs::metadata(component).unwrap().len();
        let cold: Vec<Duration> = (0..args.rounds)
            .map(|_| {
                let dir = tempfile::tempdir().unwrap();
                runtime.block_on(start(dir.path(), component)).1
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        runtime.block_on(start(dir.path(), component));
        // A warm start is a later start: by then the artifact has settled, and the first
        // start after that verified it and remembered so (`runtime/cache/remembered.rs`).
        std::thread::sleep(agent_host::runtime::cache::SETTLED + Duration::from_secs(1));
        runtime.block_on(start(dir.path(), component));
        let warm: Vec<Duration> =
            (0..args.rounds).map(|_| runtime.block_on(start(dir.path(), component)).1).collect();
        let (host, _) = runtime.block_on(start(dir.path(), component));
        let calls = runtime.block_on(call_times(&host, args.calls));
        println!(
            "{language:<12} {:>7.1}MB {:>13.0}ms {:>10.1}ms {:>10.0}µs {:>10.0}µs",
            size as f64 / 1e6,
            median(&cold).as_secs_f64() * 1e3,
            median(&warm).as_secs_f64() * 1e3,
            median(&calls).as_secs_f64() * 1e6,
            calls.iter().sum::<Duration>().as_secs_f64() * 1e6 / calls.len() as f64,
        );
    }
    println!("\nloading a source folder (median of {} rounds)", args.rounds);
    for (language, folder) in &folders {
        let dir = tempfile::tempdir().unwrap();
        // Fills the compile cache, so every timed round finds the component there.
        let component = agent_host::plugins::resolve_component(
            folder,
            &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
            &|_| {},
        )
        .unwrap();
        runtime.block_on(start(dir.path(), &component));
        let unchanged: Vec<Duration> = (0..args.rounds)
            .map(|_| {
                let started = Instant::now();
                let component = agent_host::plugins::resolve_component(
                    folder,
                    &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
                    &|_| {},
                )
                .unwrap();
                runtime.block_on(start(dir.path(), &component));
                started.elapsed()
            })
            .collect();
        let rebuilt: Vec<Duration> = (0..args.rounds)
            .map(|_| {
                forget_build(folder);
                let cold = tempfile::tempdir().unwrap();
                let started = Instant::now();
                let component = agent_host::plugins::resolve_component(
                    folder,
                    &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
                    &|_| {},
                )
                .unwrap();
                runtime.block_on(start(cold.path(), &component));
                started.elapsed()
            })
            .collect();
        println!(
            "{language:<12} unchanged (kept build, compile cache) {:>8.2} s   built anew and compiled cold {:>6.1} s",
            median(&unchanged).as_secs_f64(),
            median(&rebuilt).as_secs_f64()
        );
    }
}

/// A host in `dir` (its compile cache there) on `component` alone, and how long it took.
async fn start(dir: &Path, component: &Path) -> (Host, Duration) {
    std::fs::write(dir.join("script.toml"), "[[turn]]\ntext = \"done\"\n").unwrap();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n[storage]\npath = \"s.db\"\n\
             [runtime]\ncache_dir = \"cache\"\n[[plugin]]\npath = \"{}\"\n",
            component.display()
        ),
    )
    .unwrap();
    let started = Instant::now();
    let config = Config::load(&config).unwrap();
    let model = ModelClient::from_config(&config).unwrap().unwrap();
    let host = Host::new(config, model).await.unwrap();
    (host, started.elapsed())
}

/// `calls` calls of `advance_stage` that the plugin refuses (a stage behind), so every call
/// does the same work: read the stage, decide, answer.
async fn call_times(host: &Host, calls: usize) -> Vec<Duration> {
    let session = host.sessions().create().unwrap();
    let mut session = session.lock().await;
    let arguments = json!({"to": "triage"});
    let mut times = Vec::with_capacity(calls);
    for index in 0..calls + 10 {
        let started = Instant::now();
        let result = host.invoke_tool(&mut session, "advance_stage", &arguments, &NoEvents).await.unwrap();
        if index >= 10 {
            times.push(started.elapsed());
        }
        assert!(!result.ok && result.output.contains("behind you"), "{}", result.output);
    }
    times
}

/// `plugins/triage-modes-ts` in a folder of its own, its package.json asking for QuickJS.
fn quickjs_copy() -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for file in ["plugin.ts", "stages.ts"] {
        std::fs::copy(repo().join("plugins/triage-modes-ts").join(file), copy.path().join(file)).unwrap();
    }
    std::fs::write(
        copy.path().join("package.json"),
        r#"{"name": "triage-modes", "version": "0.1.0", "agent-host": {"engine": "quickjs"}}"#,
    )
    .unwrap();
    copy
}

/// Removes a source folder's kept build, so the next load builds it anew.
fn forget_build(folder: &Path) {
    for entry in std::fs::read_dir(folder.join("build")).into_iter().flatten().flatten() {
        if entry.path().extension().is_some_and(|ext| ext == "source-digest") {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}
