//! What the OS sandbox costs per command: wall time of `sh -c true` through
//! `agent_host::sandbox`, confined (namespaces, the filesystem built, PID 1 reaped) and
//! unconfined (`[runtime] sandbox = "none"`), each as `process.run` calls it: a writable
//! workspace folder and an output cap. A third row shares the host's network
//! (`grants.network = true`), which skips making a network namespace.
//!
//! `cargo bench -p agent-host --bench sandbox` (`RUNS=n` to change the 1,000 runs).

use std::time::{Duration, Instant};

use agent_host::sandbox::{RunLimits, Sandbox, SandboxSpec};
use hdrhistogram::Histogram;

/// Allocates as the binary does (`cli/src/main.rs`), so the bench measures what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const WARMUP: usize = 20;

fn main() {
    let runs: usize = std::env::var("RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(1_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let workspace = tempfile::tempdir().expect("a workspace folder");
    let spec = SandboxSpec::new("/bin/sh")
        .args(["-c", "true"])
        .read_write(workspace.path())
        .workdir(workspace.path());
    let limits = RunLimits { timeout: Duration::from_secs(10), max_output_bytes: 64 * 1024 };
    let confined = Sandbox::confined().unwrap_or_else(|error| panic!("no sandbox on this machine: {error}"));
    println!("sh -c true, {runs} runs each (wall time per run)");
    let networked = spec.clone().network(true);
    let cases = [
        ("sandboxed", confined, &spec),
        ("sandboxed, network on", confined, &networked),
        ("unconfined", Sandbox::unconfined(), &spec),
    ];
    for (label, sandbox, spec) in cases {
        let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("valid bounds");
        runtime.block_on(async {
            for index in 0..WARMUP + runs {
                let started = Instant::now();
                let output = sandbox.run(spec, limits).await.expect("the run starts");
                let took = started.elapsed();
                assert_eq!(output.status, Some(0), "{}", String::from_utf8_lossy(&output.stderr));
                if index >= WARMUP {
                    histogram.record(took.as_micros().max(1) as u64).expect("in bounds");
                }
            }
        });
        let ms = |micros: u64| micros as f64 / 1000.0;
        println!(
            "{label:>21}: p50 {:.2} ms  p99 {:.2} ms  mean {:.2} ms  max {:.2} ms",
            ms(histogram.value_at_quantile(0.50)),
            ms(histogram.value_at_quantile(0.99)),
            histogram.mean() / 1000.0,
            ms(histogram.max()),
        );
    }
}
