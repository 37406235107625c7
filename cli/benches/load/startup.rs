//! Start-up: the real binary from process start to "ready" (`--check`: config read, every
//! stock plugin compiled or taken from the cache, linked and configured), cold and warm.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `agent-host --check` `runs` times and returns the sorted wall times; with `cold`,
/// the compile cache is emptied before each run.
pub fn measure(config: &Path, cache_dir: &Path, runs: usize, cold: bool) -> anyhow::Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        if cold {
            let _ = std::fs::remove_dir_all(cache_dir);
        }
        let started = Instant::now();
        let output = Command::new(env!("CARGO_BIN_EXE_agent-host"))
            .arg("--config")
            .arg(config)
            .args(["--check", "--offline"])
            .output()?;
        times.push(started.elapsed());
        anyhow::ensure!(
            output.status.success(),
            "--check failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    times.sort_unstable();
    Ok(times)
}
