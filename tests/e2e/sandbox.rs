//! The runtime's limits, each paired with a call that works right after: a trap, a panic,
//! an endless loop, a memory bomb, enormous output, malformed returns (a schema or rewritten
//! arguments that are not JSON, text that is not UTF-8), a failing `configure`, writes from
//! a failed call, and state reads without a grant; calls that wait in the host (a sleep, a
//! process, a FIFO) end at their deadline all the same.

use std::time::{Duration, Instant};

use agent_host::Event;
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, TestHost, plugin_block};

async fn host(extra: &str) -> TestHost {
    let model = FakeModel::start().await;
    TestHost::with_plugins(&model, &plugin_block("misbehave", extra)).await
}

async fn call(
    test: &TestHost,
    session: &agent_host::agent::SessionHandle,
    tool: &str,
    args: Value,
) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.unwrap()
}

/// The fault's error text, after checking that the next call works.
async fn fault_then_recovery(test: &TestHost, tool: &str) -> String {
    let session = test.session();
    let failed = call(test, &session, tool, json!({})).await;
    assert!(!failed.ok, "{tool} should fail: {}", failed.output);
    let errors: Vec<String> = test
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Error { message, plugin } => {
                assert_eq!(plugin.as_deref(), Some("misbehave@0.1.0"));
                Some(message)
            }
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "one error event for the failed call: {errors:?}");
    let next = call(test, &session, "echo", json!({"text": "still here"})).await;
    assert!(next.ok && next.output == "still here", "the next call works: {}", next.output);
    failed.output
}

#[tokio::test]
async fn a_trap_is_contained() {
    let test = host("").await;
    let error = fault_then_recovery(&test, "trap").await;
    assert!(error.contains("plugin misbehave@0.1.0 trapped"), "{error}");
}

#[tokio::test]
async fn a_panic_reports_its_message() {
    let test = host("").await;
    let error = fault_then_recovery(&test, "panic").await;
    assert!(error.contains("plugin misbehave@0.1.0 panicked: misbehave panicked on purpose"), "{error}");
}

#[tokio::test]
async fn an_endless_loop_hits_the_deadline() {
    let test = host("[plugin.limits]\ntimeout_ms = 150\n").await;
    let error = fault_then_recovery(&test, "spin").await;
    assert!(error.contains("plugin misbehave@0.1.0 timed out after 150 ms"), "{error}");
}

#[tokio::test]
async fn a_memory_bomb_hits_the_memory_limit() {
    let test = host("[plugin.limits]\nmemory_mb = 24\n").await;
    let error = fault_then_recovery(&test, "grow").await;
    assert!(error.contains("plugin misbehave@0.1.0 hit its memory limit of 24 MiB"), "{error}");
}

#[tokio::test]
async fn more_small_blocks_than_the_sdks_arena_holds_stay_intact() {
    // 40,000 blocks of 64 bytes, three times what the arena holds, with their frees and
    // regrowths; blocks aligned to 64 and zeroed ones beside them.
    let test = host("[plugin.limits]\nmemory_mb = 64\n").await;
    let session = test.session();
    let result = call(&test, &session, "churn", json!({"count": 40000, "bytes": 64})).await;
    assert!(result.ok && result.output == "40000 blocks kept intact", "{}", result.output);
    let next = call(&test, &session, "churn", json!({"count": 10, "bytes": 8})).await;
    assert_eq!(next.output, "10 blocks kept intact");
}

#[tokio::test]
async fn enormous_output_is_cut_with_a_note() {
    let test = host("[plugin.limits]\nmax_output_kb = 64\nmemory_mb = 128\n").await;
    let session = test.session();
    let result = call(&test, &session, "flood", json!({})).await;
    assert!(result.ok);
    assert!(result.output.len() < 70 * 1024);
    assert!(
        result.output.ends_with(&format!("[output cut: 65536 of {} bytes shown]", 8 << 20)),
        "{}",
        &result.output[result.output.len() - 80..]
    );
}

#[tokio::test]
async fn a_schema_that_is_not_json_is_a_malformed_return() {
    let test = host("[plugin.config]\nbad_schema = true\n").await;
    let session = test.session();
    let result = call(&test, &session, "late", json!({})).await;
    assert!(!result.ok);
    assert!(result.output.contains("no tool named `late`"), "{}", result.output);
    let errors: Vec<String> = test
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Error { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert!(
        errors.iter().any(|m| m.contains("misbehave@0.1.0 returned malformed output")
            && m.contains("schema of tool `late` is not JSON")),
        "{errors:?}"
    );
}

#[tokio::test]
async fn a_result_that_is_not_utf8_is_malformed_and_names_the_plugin() {
    let test = host("").await;
    let error = fault_then_recovery(&test, "bad_utf8").await;
    assert!(error.contains("plugin misbehave@0.1.0 returned malformed output"), "{error}");
    assert!(error.contains("invalid utf-8 sequence"), "says what was malformed: {error}");
}

#[tokio::test]
async fn rewritten_arguments_that_are_not_json_fail_closed() {
    let test = host("[plugin.config]\nbad_updated_arguments = true\n").await;
    let session = test.session();
    let refused = call(&test, &session, "remember", json!({"key": "k", "value": 1})).await;
    assert!(!refused.ok, "{}", refused.output);
    assert!(
        refused.output.contains("the policy plugin failed, so the call is refused"),
        "{}",
        refused.output
    );
    assert!(
        refused.output.contains("misbehave@0.1.0 returned malformed output: updated arguments are not JSON"),
        "{}",
        refused.output
    );
    assert_eq!(session.lock().await.bag().get("misbehave", "memory"), None, "the tool did not run");
}

#[tokio::test]
async fn a_failed_call_leaves_the_state_bag_untouched() {
    let test = host("").await;
    let session = test.session();
    assert!(call(&test, &session, "remember", json!({"key": "k", "value": 1})).await.ok);
    let failed = call(&test, &session, "write_then_fail", json!({})).await;
    assert_eq!(failed.output, "failed after writing");
    let trapped = call(&test, &session, "trap", json!({})).await;
    assert!(!trapped.ok);
    assert_eq!(call(&test, &session, "recall", json!({})).await.output, r#"{"k":1}"#);
}

#[tokio::test]
async fn reading_another_plugins_state_needs_a_grant() {
    let test = host("").await;
    let session = test.session();
    let refused = call(&test, &session, "peek", json!({"namespace": "agent-mode", "key": "mode"})).await;
    assert!(!refused.ok);
    assert!(refused.output.contains("read_state = [\"agent-mode\"]"), "{}", refused.output);

    let model = FakeModel::start().await;
    let plugins = format!(
        "{}{}",
        plugin_block("misbehave", "[plugin.grants]\nread_state = [\"agent-mode\"]\n"),
        plugin_block("agent-mode", "")
    );
    let granted = TestHost::with_plugins(&model, &plugins).await;
    let session = granted.session();
    session.lock().await.bag().put("agent-mode", "mode", Some("\"plan\"".into()));
    let read = call(&granted, &session, "peek", json!({"namespace": "agent-mode", "key": "mode"})).await;
    assert_eq!(read.output, "\"plan\"");
}

#[tokio::test]
async fn a_failing_configure_is_a_load_error_naming_plugin_and_entry() {
    let model = FakeModel::start().await;
    let config = crate::support::config_text(
        &model.url(),
        &plugin_block("misbehave", "[plugin.config]\nfail_configure = true\n"),
    );
    let error = TestHost::new(&config).await.err().expect("the load fails").to_string();
    assert!(
        error.contains("plugin misbehave@0.1.0 refused its configuration: fail_configure is set"),
        "{error}"
    );
    assert!(error.contains("config.toml:"), "names the file and line: {error}");
}

#[tokio::test]
async fn a_grant_for_a_plugin_that_is_not_loaded_is_a_load_error() {
    let model = FakeModel::start().await;
    let config = crate::support::config_text(
        &model.url(),
        &plugin_block("misbehave", "[plugin.grants]\nread_state = [\"agent-mode\"]\n"),
    );
    let error = TestHost::new(&config).await.err().expect("the load fails").to_string();
    assert!(
        error.contains("granted to read the state of `agent-mode`, but no loaded plugin has that name"),
        "{error}"
    );
}

/// Calls `tool` with `args`, expecting it to fail at the deadline of `timeout_ms`, well
/// before the `blocked` it would otherwise wait; then checks the next call works.
async fn ends_at_its_deadline(test: &TestHost, tool: &str, args: Value, timeout_ms: u64, blocked: Duration) {
    let session = test.session();
    let started = Instant::now();
    let failed = call(test, &session, tool, args).await;
    let took = started.elapsed();
    assert!(!failed.ok, "{tool} should fail: {}", failed.output);
    assert!(
        failed.output.contains(&format!("plugin misbehave@0.1.0 timed out after {timeout_ms} ms")),
        "{}",
        failed.output
    );
    assert!(took < blocked / 2, "{tool} held the call {took:?}, as long as it waited in the host");
    let next = call(test, &session, "echo", json!({"text": "still here"})).await;
    assert!(next.ok && next.output == "still here", "the next call works: {}", next.output);
}

#[tokio::test]
async fn a_call_sleeping_in_a_host_poll_ends_at_its_deadline() {
    // The epoch deadline only interrupts guest code: a WASI sleep waits in the host.
    let test = host("[plugin.limits]\ntimeout_ms = 300\n").await;
    ends_at_its_deadline(&test, "sleep", json!({"ms": 30_000}), 300, Duration::from_secs(30)).await;
}

#[tokio::test]
async fn a_call_waiting_for_a_process_ends_at_its_deadline() {
    // The process's own timeout is the plugin's to choose (60 s here); the host cuts it to
    // what is left of the call's deadline, so the call returns in time with what the
    // command printed so far instead of failing (or waiting 20 s).
    let workspace = tempfile::tempdir().unwrap();
    let grant = format!(
        "[plugin.limits]\ntimeout_ms = 2000\n[plugin.grants]\nprocess = true\n[plugin.grants.dirs]\n\"/w\" = {{ host = \"{}\", write = true }}\n",
        workspace.path().display()
    );
    let test = host(&grant).await;
    let session = test.session();
    let started = Instant::now();
    let args = json!({"command": "echo started; sleep 20", "timeout_ms": 60_000});
    let result = call(&test, &session, "run", args).await;
    let took = started.elapsed();
    assert!(result.ok && result.output == "started\n", "{}", result.output);
    assert!(took < Duration::from_secs(10), "the process held the call {took:?}");
    let next = call(&test, &session, "echo", json!({"text": "still here"})).await;
    assert!(next.ok && next.output == "still here", "the next call works: {}", next.output);
}

#[tokio::test]
async fn a_call_blocked_reading_a_fifo_ends_at_its_deadline() {
    let granted = tempfile::tempdir().unwrap();
    let fifo = granted.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo failed");
    let grant = format!(
        "[plugin.limits]\ntimeout_ms = 300\n[plugin.grants.dirs]\n\"/data\" = {{ host = \"{}\" }}\n",
        granted.path().display()
    );
    let test = host(&grant).await;
    // Without a writer, opening the FIFO blocks forever: here, no test would ever end.
    ends_at_its_deadline(&test, "read_file", json!({"target": "/data/fifo"}), 300, Duration::from_secs(3600))
        .await;
    // The host's blocked read is on a thread of its own; a writer that comes and goes lets
    // it finish, so the test's runtime can shut down.
    drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
}
