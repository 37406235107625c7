//! The host's own cost of an MCP tool call: server-everything's `echo` over stdio, called
//! the way the model calls it (`Host::invoke_tool`: schema check, `pre-tool-use` and
//! `post-tool-use` hooks of the stock permissions plugin, events, the step's SQLite commit),
//! beside the same call straight to the server (`McpServer::call`: rmcp, the pipe, node),
//! and beside a WASM plugin's tool (misbehave's `echo`) through the same path. The host's
//! overhead per MCP call is the first minus the second.
//!
//! `cargo bench -p agent-host --bench mcp` (installs the reference servers when missing).

// Bench code: a failed unwrap is a failed run (clippy.toml's test allowance reaches only tests).
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_host::agent::SessionHandle;
use agent_host::model::ModelClient;
use agent_host::{Config, Host};
use serde_json::json;

const CALLS: usize = 1_000;
const ROUNDS: usize = 4;
const WARM_UP: usize = 100;

fn main() -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let status =
        std::process::Command::new("bash").arg(root.join("scripts/install-mcp-servers.sh")).status()?;
    anyhow::ensure!(status.success(), "installing the reference MCP servers failed");
    let home = std::env::var_os("AGENT_HOST_MCP_HOME").map(std::path::PathBuf::from).unwrap_or_else(|| {
        std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/agent-host/mcp")
    });
    let everything = home.join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let built = agent_host::plugins::build_workspace(
        &root.join("plugins"),
        &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
    )?;

    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("script.toml"), "[[turn]]\ntext = \"done\"\n")?;
    let config = format!(
        "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n[storage]\npath = \"s.db\"\n\
         [runtime]\ncache_dir = \"cache\"\n\
         [[plugin]]\npath = \"{}\"\n[plugin.config]\npreset = \"trust\"\n\
         [[plugin]]\npath = \"{}\"\n\
         [[mcp]]\nname = \"everything\"\ncommand = \"node\"\nargs = [\"{}\", \"stdio\"]\n",
        built["permissions"].display(),
        built["misbehave"].display(),
        everything.display(),
    );
    let config_path = dir.path().join("config.toml");
    std::fs::write(&config_path, config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async {
        let config = Config::load(&config_path)?;
        let model = ModelClient::from_config(&config)?.expect("a scripted model");
        let host = Arc::new(Host::new(config, model).await?);
        let server = host.mcp().servers().first().cloned().expect("the server is configured");
        anyhow::ensure!(
            server.status().last_error.is_none(),
            "server-everything did not start: {}",
            host.mcp_table()
        );
        let echo =
            server.tools().iter().find(|tool| tool.remote == "echo").cloned().expect("echo is offered");
        let session = host.sessions().create()?;
        let arguments = json!({ "message": "bench" });

        let text = json!({ "text": "bench" });
        let (mut direct, mut through_host, mut wasm) = (Vec::new(), Vec::new(), Vec::new());
        // In rounds, the three in turn, so that a slow minute of the machine (or of node)
        // falls on all of them alike.
        for _ in 0..ROUNDS {
            direct.extend(
                measure(|| async {
                    let result = server.call(&echo, arguments.clone(), 1 << 20).await;
                    assert!(result.ok, "{}", result.output);
                })
                .await,
            );
            through_host.extend(measure(|| invoke(&host, &session, "mcp__everything__echo", &arguments)).await);
            wasm.extend(measure(|| invoke(&host, &session, "echo", &text)).await);
        }
        for times in [&mut direct, &mut through_host, &mut wasm] {
            times.sort_unstable();
        }

        println!(
            "agent-host MCP bench: {} calls each, in {ROUNDS} rounds each after {WARM_UP} to warm up, one at a time\n",
            CALLS * ROUNDS
        );
        report("MCP echo, straight to the server (rmcp, stdio, node)", &direct);
        report("MCP echo through the host (schema, hooks, events, commit)", &through_host);
        report("WASM plugin echo through the host (the same path)", &wasm);
        // Only the medians subtract: the tails are node's pauses, which fall on either side.
        println!(
            "host's own overhead per MCP call (the medians, through the host minus straight): {:.0} µs",
            micros(quantile(&through_host, 0.5)) - micros(quantile(&direct, 0.5)),
        );
        Ok(())
    })
}

async fn invoke(host: &Host, session: &SessionHandle, tool: &str, arguments: &serde_json::Value) {
    let mut session = session.lock().await;
    let result =
        host.invoke_tool(&mut session, tool, arguments, &agent_host::events::NoEvents).await.unwrap();
    assert!(result.ok, "{tool}: {}", result.output);
}

/// Each call's time, after a warm-up.
async fn measure<F, Fut>(call: F) -> Vec<Duration>
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..WARM_UP {
        call().await;
    }
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        call().await;
        times.push(started.elapsed());
    }
    times
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn report(label: &str, times: &[Duration]) {
    println!(
        "{label}:\n  p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        micros(quantile(times, 0.5)),
        micros(quantile(times, 0.99)),
        micros(times[times.len() - 1])
    );
}
