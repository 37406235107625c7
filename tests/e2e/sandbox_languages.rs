//! A plugin written in Python is held by the same limits as one in Rust: an error it raises
//! reaches the model as its message, an exception it did not mean is a message too (with the
//! traceback in the host's log), an endless loop ends at the deadline, a failed call's state
//! writes are discarded, and a hook that raises fails alone. Each fault is followed by a call
//! that works.

use agent_host::Event;
use agent_host::agent::SessionHandle;
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, json_prompt_command, source_plugin_block};

async fn host(extra: &str) -> TestHost {
    let model = FakeModel::start().await;
    TestHost::with_plugins(&model, &source_plugin_block("testing/misbehave-py", extra)).await
}

async fn call(test: &TestHost, session: &SessionHandle, tool: &str, args: Value) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.expect("the call runs")
}

/// The failed call's output, after checking that the next call works.
async fn fault_then_recovery(test: &TestHost, session: &SessionHandle, tool: &str) -> String {
    let failed = call(test, session, tool, json!({})).await;
    assert!(!failed.ok, "{tool} should fail: {}", failed.output);
    let next = call(test, session, "echo", json!({"text": "still here"})).await;
    assert!(next.ok && next.output == "still here", "the next call works: {}", next.output);
    failed.output
}

fn error_events(test: &TestHost) -> Vec<String> {
    test.take_events()
        .into_iter()
        .filter_map(|event| match event {
            Event::Error { message, .. } => Some(message),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_error_a_python_tool_raises_reaches_the_model_as_its_message() {
    let test = host("").await;
    let session = test.session();
    assert_eq!(fault_then_recovery(&test, &session, "fail").await, "failed on purpose");
    // An exception the plugin did not mean: its type and message, not a bare trap.
    assert_eq!(fault_then_recovery(&test, &session, "crash").await, "KeyError: 'missing key'");
    assert!(error_events(&test).is_empty(), "a raised error is the tool's answer, not a host error");
}

#[tokio::test]
async fn arguments_that_do_not_fit_the_dataclass_are_refused_by_field() {
    let test = host("").await;
    let session = test.session();
    let refused = call(&test, &session, "echo", json!({"text": 3})).await;
    assert!(!refused.ok, "{}", refused.output);
    assert!(refused.output.contains("text"), "{}", refused.output);
    let unknown = call(&test, &session, "echo", json!({"text": "a", "loud": true})).await;
    assert!(!unknown.ok && unknown.output.contains("loud"), "{}", unknown.output);
}

#[tokio::test]
async fn an_endless_python_loop_hits_the_deadline() {
    let test = host("[plugin.limits]\ntimeout_ms = 1000\n").await;
    let session = test.session();
    let error = fault_then_recovery(&test, &session, "spin").await;
    assert!(error.contains("plugin misbehave-py@0.1.0 timed out after 1000 ms"), "{error}");
    assert_eq!(error_events(&test).len(), 1);
}

#[tokio::test]
async fn a_failed_python_call_leaves_no_state_behind() {
    let test = host("").await;
    let session = test.session();
    let error = fault_then_recovery(&test, &session, "write_then_fail").await;
    assert_eq!(error, "failed after writing");
    assert_eq!(session.lock().await.bag().get_json("misbehave-py", "written"), None);
}

#[tokio::test]
async fn a_hook_that_raises_fails_alone_with_its_traceback_in_the_log() {
    let test = host("").await;
    let session = test.session();
    assert!(test.host.plugins().status(&*session.lock().await).await.is_empty());
    assert!(call(&test, &session, "echo", json!({"text": "fine"})).await.ok);

    // Through the binary, where the log is seen: the traceback of the unmeant exception.
    let model = FakeModel::start().await;
    model.push(Reply::tool("crash", "{}")).push(Reply::text("done"));
    let dir = tempfile::tempdir().unwrap();
    let plugins = source_plugin_block("testing/misbehave-py", "");
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), &plugins)).unwrap();
    let output = json_prompt_command(dir.path(), None, "crash")
        .env("AGENT_HOST_TEST_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(log.contains("Traceback") && log.contains("KeyError"), "{log}");
}
