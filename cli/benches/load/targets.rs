//! Issue 7's targets, checked against what this run measured and printed as one table.
//! The bench reports; it does not fail on a miss (a slow machine is not a broken host).

use std::time::Duration;

/// What one run measured, for the targets that the load bench covers.
#[derive(Default)]
pub struct Figures {
    pub warm_start: Option<Duration>,
    pub serial: Option<Throughput>,
    pub concurrent: Option<(usize, Throughput)>,
    pub kib_per_idle_session: Option<f64>,
}

pub struct Throughput {
    pub sessions_per_second: f64,
    pub overhead_p50: Duration,
    pub overhead_p99: Duration,
}

pub fn print(figures: &Figures) {
    println!("\nagainst issue 7's targets (2-core machine, instant endpoint):");
    if let Some(serial) = &figures.serial {
        line(
            "overhead per model call p50 < 100 µs, p99 < 1 ms",
            format!("{:.0} µs / {:.0} µs", micros(serial.overhead_p50), micros(serial.overhead_p99)),
            serial.overhead_p50 < Duration::from_micros(100)
                && serial.overhead_p99 < Duration::from_millis(1),
        );
        line(
            ">= 1,000 sessions/s one at a time",
            format!("{:.0}/s", serial.sessions_per_second),
            serial.sessions_per_second >= 1_000.0,
        );
    }
    if let Some((concurrency, concurrent)) = &figures.concurrent {
        line(
            ">= 2,500 sessions/s at concurrency 50",
            format!("{:.0}/s at concurrency {concurrency}", concurrent.sessions_per_second),
            *concurrency == 50 && concurrent.sessions_per_second >= 2_500.0,
        );
    }
    if let Some(kib) = figures.kib_per_idle_session {
        line("< 20 KB resident per idle session", format!("{kib:.2} KiB"), kib * 1024.0 < 20_000.0);
    }
    if let Some(warm) = figures.warm_start {
        line(
            "warm start < 150 ms",
            format!("{:.0} ms", warm.as_secs_f64() * 1e3),
            warm < Duration::from_millis(150),
        );
    }
    println!(
        "  (reload latency: `cargo bench -p agent-host --bench host_overhead -- reload`, target < 50 ms)"
    );
}

fn line(target: &str, measured: String, met: bool) {
    println!("  {target:<52} {measured:<28} {}", if met { "met" } else { "MISSED" });
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
