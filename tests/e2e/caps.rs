//! Host-side caps: what a plugin with a small `memory_mb` can make the host hold through its
//! imports (state, events, log text), and what the model endpoint can make it buffer. Each
//! flood is refused at its cap, with an error naming the cap's key, and nothing of the call
//! is kept. The floods from the issue run in the real binary, whose peak RSS is read from
//! `/proc` while it waits for its next model reply.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_host::Event;
use agent_host::agent::SessionHandle;
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, plugin_block};

/// What a run of the binary left: its JSON events, its peak RSS, its stderr and the bytes
/// of the session store.
struct Run {
    events: Vec<Value>,
    peak_rss_mb: u64,
    stderr_bytes: usize,
    store_bytes: u64,
}

/// Runs one `--prompt --json` turn of the binary in which the model calls `tool` with
/// `args` from misbehave (with `extra` config lines); its peak RSS is read once the tool
/// ran, while the host waits for the model's next reply.
async fn binary_turn(tool: &str, args: Value, extra: &str) -> Run {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    model.push(Reply::tool(tool, &args.to_string())).push(Reply::text("done").held_until(&gate));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text(&model.url(), &plugin_block("misbehave", extra))).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("RUST_LOG")
        .arg("--config")
        .arg(&config)
        .args(["--prompt", "flood", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    // Read as it comes: a child writing more than a pipe holds would wait for the reader.
    let mut stderr = child.stderr.take().unwrap();
    let stderr = tokio::spawn(async move {
        let mut bytes = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut stderr, &mut bytes).await.map(|_| bytes)
    });
    let waiting = Instant::now();
    while model.requests().len() < 2 {
        assert!(waiting.elapsed() < Duration::from_secs(120), "the tool call never finished");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let peak_rss_mb = peak_rss_kb(pid) / 1024;
    gate.notify_one();
    let output = child.wait_with_output().await.unwrap();
    let stderr = stderr.await.unwrap().unwrap();
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&stderr));
    let events = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let store_bytes = ["sessions.db", "sessions.db-wal"]
        .iter()
        .filter_map(|name| std::fs::metadata(dir.path().join(name)).ok())
        .map(|meta| meta.len())
        .sum();
    // Shown with --nocapture: the figures the assertions bound.
    eprintln!("{tool}: peak RSS {peak_rss_mb} MiB, store {store_bytes} bytes, stderr {} bytes", stderr.len());
    Run { events, peak_rss_mb, stderr_bytes: stderr.len(), store_bytes }
}

/// `VmHWM` of process `pid`: its resident set's high-water mark, in KiB.
fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("VmHWM in /proc/PID/status");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

impl Run {
    /// The output of the one tool result, after checking that it failed.
    fn failed_tool(&self) -> &str {
        let results: Vec<&Value> = self.events.iter().filter(|e| e["type"] == "tool_result").collect();
        assert_eq!(results.len(), 1, "{:?}", self.events);
        assert_eq!(results[0]["ok"], false, "the call should fail: {}", results[0]);
        results[0]["output"].as_str().unwrap()
    }

    fn plugin_events(&self) -> usize {
        self.events.iter().filter(|e| e["type"] == "plugin").count()
    }
}

#[tokio::test]
async fn a_state_flood_from_a_small_plugin_is_refused_and_the_store_stays_small() {
    // From the issue: 200 values of 3 MiB from a 64 MiB plugin made the host hold 1.5 GB and
    // wrote a 630 MB sessions.db.
    let run =
        binary_turn("hoard_state", json!({"count": 200, "kb": 3072}), "[plugin.limits]\nmemory_mb = 64\n")
            .await;
    let error = run.failed_tool();
    assert!(error.contains("`state_total_kb` = 16384 KiB"), "names the cap and its key: {error}");
    assert!(error.contains("nothing of the call was kept"), "{error}");
    assert!(run.peak_rss_mb < 400, "the host's peak RSS was {} MiB", run.peak_rss_mb);
    assert!(run.store_bytes < 4 << 20, "sessions.db holds {} bytes", run.store_bytes);
}

#[tokio::test]
async fn an_event_flood_is_refused_at_the_payload_cap_and_no_event_is_kept() {
    // From the issue: large events held 1.2 GB in the host.
    let run = binary_turn("flood_events", json!({"count": 256, "kb": 4096}), "").await;
    let error = run.failed_tool();
    assert!(error.contains("`event_payload_kb` = 256 KiB"), "{error}");
    assert_eq!(run.plugin_events(), 0, "no event of the failed call reaches the stream");
    assert!(run.peak_rss_mb < 400, "the host's peak RSS was {} MiB", run.peak_rss_mb);
}

#[tokio::test]
async fn a_log_flood_is_refused_at_the_per_call_cap() {
    // From the issue: 200 MB on stderr from one call.
    let run = binary_turn("flood_log", json!({"count": 200, "kb": 1024}), "").await;
    let error = run.failed_tool();
    assert!(error.contains("`log_kb_per_call` = 1024 KiB"), "{error}");
    assert!(run.stderr_bytes < 4 << 20, "{} bytes reached stderr", run.stderr_bytes);
}

async fn call(test: &TestHost, session: &SessionHandle, tool: &str, args: Value) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.unwrap()
}

async fn host(extra: &str) -> TestHost {
    let model = FakeModel::start().await;
    TestHost::with_plugins(&model, &plugin_block("misbehave", extra)).await
}

/// The keys misbehave holds in `session`.
async fn keys(session: &SessionHandle) -> Vec<String> {
    session.lock().await.bag().namespace("misbehave").into_keys().collect()
}

#[tokio::test]
async fn the_state_caps_count_per_session_and_a_plugin_may_set_its_own() {
    let test = host("[plugin.limits]\nstate_total_kb = 64\nstate_keys = 4\nstate_value_kb = 20\n").await;
    let session = test.session();
    let first = call(&test, &session, "hoard_state", json!({"count": 3, "kb": 16, "prefix": "a"})).await;
    assert!(first.ok, "48 KiB in 3 keys fits: {}", first.output);

    // Each call alone fits; the session's total does not.
    let second = call(&test, &session, "hoard_state", json!({"count": 1, "kb": 17, "prefix": "b"})).await;
    assert!(!second.ok);
    assert!(second.output.contains("`state_total_kb` = 64 KiB"), "{}", second.output);
    let third = call(&test, &session, "hoard_state", json!({"count": 2, "kb": 1, "prefix": "c"})).await;
    assert!(third.output.contains("`state_keys` = 4 keys"), "{}", third.output);
    let big = call(&test, &session, "hoard_state", json!({"count": 1, "kb": 21, "prefix": "d"})).await;
    assert!(big.output.contains("`state_value_kb` = 20 KiB"), "{}", big.output);
    let nul = call(&test, &session, "hoard_state", json!({"count": 1, "kb": 1, "prefix": "e\0"})).await;
    assert!(!nul.ok && nul.output.contains("holds a NUL character"), "{}", nul.output);
    assert_eq!(keys(&session).await, ["ahoard0", "ahoard1", "ahoard2"], "the failed calls wrote nothing");

    // Rewriting a key counts only the difference, and another session starts from zero.
    let rewrite = call(&test, &session, "hoard_state", json!({"count": 3, "kb": 19, "prefix": "a"})).await;
    assert!(rewrite.ok, "{}", rewrite.output);
    let other = test.session();
    assert!(call(&test, &other, "hoard_state", json!({"count": 3, "kb": 19})).await.ok);
}

#[tokio::test]
async fn too_many_events_fail_the_call_and_keep_none_of_them() {
    let test = host("[plugin.limits]\nevents_per_call = 10\n").await;
    let session = test.session();
    let ok = call(&test, &session, "flood_events", json!({"count": 10, "kb": 1})).await;
    assert!(ok.ok, "{}", ok.output);
    let emitted = test.take_events().iter().filter(|e| matches!(e, Event::Plugin { .. })).count();
    assert_eq!(emitted, 10);

    let failed = call(&test, &session, "flood_events", json!({"count": 11, "kb": 1})).await;
    assert!(!failed.ok);
    assert!(failed.output.contains("`events_per_call` = 10 events"), "{}", failed.output);
    let emitted = test.take_events().iter().filter(|e| matches!(e, Event::Plugin { .. })).count();
    assert_eq!(emitted, 0, "none of the failed call's events are delivered");
}

/// The error of a turn whose model replies `reply`, with `lines` added to the config's `table`.
async fn turn_error(table: &str, lines: &str, reply: Reply) -> String {
    let model = FakeModel::start().await;
    model.push(reply);
    let config = config_text(&model.url(), "").replace(&format!("{table}\n"), &format!("{table}\n{lines}"));
    let test = TestHost::new(&config).await.unwrap();
    let session = test.session();
    test.turn(&session, "hello").await.expect_err("the model call fails").to_string()
}

#[tokio::test]
async fn an_sse_line_past_its_cap_fails_the_model_call() {
    let error = turn_error("[model]", "sse_line_kb = 64\n", Reply::text(&"x".repeat(200 << 10))).await;
    assert!(error.contains("longer than 64 KiB, the cap `sse_line_kb` in [model]"), "{error}");
}

#[tokio::test]
async fn an_sse_line_that_never_ends_fails_at_its_cap() {
    // Not at the model's deadline, having buffered the unfinished line until then.
    let error = turn_error("[model]", "sse_line_kb = 256\n", Reply::endless_line()).await;
    assert!(error.contains("the cap `sse_line_kb`"), "{error}");
}

#[tokio::test]
async fn a_reply_body_past_its_cap_fails_the_model_call_streamed_or_whole() {
    let text = "x".repeat(1_500_000);
    for reply in [Reply::text(&text).whole(), Reply::text(&text)] {
        let error = turn_error("[model]", "endpoint_body_mb = 1\n", reply).await;
        assert!(error.contains("longer than 1 MiB, the cap `endpoint_body_mb` in [model]"), "{error}");
    }
    // The old spelling, in `[runtime.limits]`, is read as the new one.
    let old = turn_error("[runtime]", "limits = { endpoint_body_mb = 1 }\n", Reply::text(&text)).await;
    assert!(old.contains("the cap `endpoint_body_mb` in [model]"), "{old}");
}

/// The `file_edited` events of `events`: (path, whether its texts are there, whether they
/// were left out for the cap).
fn edits_told(events: Vec<Event>) -> Vec<(String, bool, bool)> {
    events
        .into_iter()
        .filter_map(|event| match event {
            Event::FileEdited { edit, .. } => {
                Some((edit.path.clone(), edit.after.is_some(), edit.texts_left_out))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_calls_edits_past_their_cap_are_told_without_texts_and_the_call_stands() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("misbehave", "")).await;
    let session = test.session();
    let mut session = session.lock().await;
    let _ = test.take_events();

    // Three edits of 400 KiB: the third passes 1 MiB, so it is told without its text.
    let args = json!({"count": 3, "kb": 400});
    let result = test.host.invoke_tool(&mut session, "report_edits", &args, &*test.events).await.unwrap();
    assert!(result.ok, "the call stands: {}", result.output);
    let told = edits_told(test.take_events());
    let expected = |path: &str, texts: bool| (path.to_owned(), texts, !texts);
    assert_eq!(
        told,
        [expected("file-0.txt", true), expected("file-1.txt", true), expected("file-2.txt", false)]
    );

    // A flood of empty edits stops at the cap too: far fewer than were reported are told.
    let args = json!({"count": 100_000, "kb": 0});
    let result = test.host.invoke_tool(&mut session, "report_edits", &args, &*test.events).await.unwrap();
    assert!(result.ok, "{}", result.output);
    let told = edits_told(test.take_events()).len();
    assert!((1_000..20_000).contains(&told), "{told} of 100,000 edits told");

    // A call that reports an edit and then fails still tells it: the change is on disk.
    let args = json!({"count": 1, "kb": 1, "fail": true});
    let result = test.host.invoke_tool(&mut session, "report_edits", &args, &*test.events).await.unwrap();
    assert!(!result.ok);
    assert_eq!(edits_told(test.take_events()), [expected("file-0.txt", true)]);
}
