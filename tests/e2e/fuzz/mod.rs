//! Property-based fuzzing (proptest) of the inputs a user or a model controls: config text,
//! tool-call arguments, TodoWrite snapshots, shell commands against permission rules, and
//! the model's SSE stream. Plugin-driven targets call the real components built from
//! `plugins/` through a real host.
//!
//! Each target runs a small number of cases by default so `cargo test` stays quick. For a
//! long run outside CI set proptest's own variable, e.g.
//! `PROPTEST_CASES=5000 cargo test -p agent-host --test e2e fuzz:: -- --test-threads 1`.
//! Every finding is kept as a plain regression test beside its target.

mod config;
mod permissions;
mod permissions_oracle;
mod sse;
mod todo_write;
mod tool_args;

use proptest::test_runner::{Config, TestRunner};

/// A runner with `default_cases` cases, or `PROPTEST_CASES` when it is set. Failures are not
/// persisted to files: a finding becomes a named regression test instead.
pub fn runner(default_cases: u32) -> TestRunner {
    let mut config = Config { failure_persistence: None, ..Config::default() };
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = default_cases;
    }
    TestRunner::new(config)
}

/// How many cases a target ran, printed so a long run reports its figures
/// (`cargo test ... -- --nocapture`).
pub fn report(target: &str, runner: &TestRunner) {
    println!("fuzz {target}: {} cases", runner.config().cases);
}
