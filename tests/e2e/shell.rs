//! The `shell` plugin and the host `process` capability: commands run in the granted
//! workspace with only the granted environment, are killed on timeout, have their output
//! capped, and a plugin without `process = true` is refused with the grant named.

use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, TestHost, plugin_block};

/// A host with the shell plugin; `grants` goes under its `[plugin.grants]`, `extra` after it.
async fn host(grants: &str, extra: &str) -> (TestHost, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    let block = format!(
        "[plugin.grants]\n{grants}\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}\n{extra}",
        workspace.path().display()
    );
    let model = FakeModel::start().await;
    (TestHost::with_plugins(&model, &plugin_block("shell", &block)).await, workspace)
}

async fn call(test: &TestHost, args: Value) -> ToolResult {
    let session = test.session();
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, "shell", &args, &*test.events).await.expect("the call runs")
}

async fn ok(test: &TestHost, args: Value) -> String {
    let result = call(test, args).await;
    assert!(result.ok, "shell failed: {}", result.output);
    result.output
}

#[tokio::test]
async fn runs_in_the_granted_workspace() {
    let (test, workspace) = host("process = true", "").await;
    let output = ok(&test, json!({"command": "echo hi; pwd"})).await;
    assert!(output.contains("exit status: 0"), "{output}");
    assert!(output.contains("hi\n"), "{output}");
    let real = workspace.path().canonicalize().unwrap();
    assert!(output.contains(&real.display().to_string()), "{output}");
    let failing = ok(&test, json!({"command": "echo oops >&2; exit 3"})).await;
    assert!(failing.contains("exit status: 3"), "{failing}");
    assert!(failing.contains("stderr:\noops"), "{failing}");
}

#[tokio::test]
async fn only_listed_environment_variables_reach_the_process() {
    // Variables the test process already has (setting one would need `unsafe`): `HOME` is
    // listed in the grant, cargo's `CARGO_MANIFEST_DIR` is not.
    let home = std::env::var("HOME").expect("HOME is set");
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let (test, _workspace) = host("process = true\nenv = [\"HOME\"]", "").await;
    let output = ok(&test, json!({"command": "env"})).await;
    assert!(output.contains(&format!("HOME={home}")), "{output}");
    assert!(!output.contains("CARGO_MANIFEST_DIR"), "{output}");
    assert!(!output.contains(&format!("={manifest_dir}\n")), "{output}");
}

#[tokio::test]
async fn a_command_past_its_timeout_is_killed() {
    let (test, _workspace) = host("process = true", "").await;
    let output =
        ok(&test, json!({"command": "echo started; sleep 5; echo finished", "timeout_ms": 200})).await;
    assert!(output.contains("timed out after 200 ms"), "{output}");
    assert!(output.contains("exit status: none"), "{output}");
    assert!(output.contains("started"), "{output}");
    assert!(!output.contains("finished"), "{output}");
}

#[tokio::test]
async fn output_past_the_cap_is_cut() {
    let (test, _workspace) = host("process = true", "[plugin.config]\nmax_output_bytes = 100").await;
    let output = ok(&test, json!({"command": "yes | head -c 5000"})).await;
    assert!(output.contains("output cut at 100 bytes"), "{output}");
    assert_eq!(output.matches("y\n").count(), 50, "{output}");
    assert!(output.contains("exit status: 0"), "{output}");
}

#[tokio::test]
async fn a_plugin_without_the_grant_is_refused() {
    // shell requires `runs-processes` from `configure`, so the load names the missing grant.
    let model = FakeModel::start().await;
    let config = crate::support::config_text(&model.url(), &plugin_block("shell", ""));
    let error = TestHost::new(&config).await.err().expect("the load fails");
    let error = format!("{error:#}");
    assert!(error.contains("runs processes but is not granted it"), "{error}");
    assert!(error.contains("`process = true`"), "{error}");
}

#[tokio::test]
async fn the_grant_without_a_writable_folder_says_what_is_missing() {
    let read_only = tempfile::tempdir().unwrap();
    let block = format!(
        "[plugin.grants]\nprocess = true\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\" }}\n",
        read_only.path().display()
    );
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("shell", &block)).await;
    let result = call(&test, json!({"command": "touch made-it"})).await;
    assert!(!result.ok, "{}", result.output);
    assert!(
        result.output.contains("plugin `shell` has no workspace to run processes in"),
        "{}",
        result.output
    );
    assert!(result.output.contains("`write = true` under its [plugin.grants.dirs]"), "{}", result.output);
    assert!(!read_only.path().join("made-it").exists());
}

/// The host keeps no more of a process's output than the plugin's call could return
/// (`max_output_kb`), however much the plugin asks for: the shell asks for 100 MB here and
/// the command prints 5 MB, yet the result the shell built (before the host cut it to
/// 4 KiB) held only about 4 KiB of it.
#[tokio::test]
async fn the_host_keeps_no_more_output_than_the_call_may_return() {
    let (test, _workspace) = host(
        "process = true",
        "[plugin.config]\nmax_output_bytes = 100000000\n[plugin.limits]\nmax_output_kb = 4",
    )
    .await;
    let output = ok(&test, json!({"command": "yes | head -c 5000000"})).await;
    let note = output.rsplit("[output cut: ").next().expect("the result is cut");
    let whole: usize =
        note.split(" of ").nth(1).and_then(|rest| rest.split(' ').next()).unwrap().parse().unwrap();
    assert!((4096..8192).contains(&whole), "the shell's result was {whole} bytes: {note}");
}
