//! Hot reload: config and plugin changes under running sessions, nothing lost.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_host::Event;
use agent_host::events::NoEvents;
use serde_json::json;

use crate::support::{FakeModel, Reply, TestHost, config_text, plugin_block, plugin_wasm};

/// A deployment whose misbehave component is a private copy, so tests can overwrite it.
async fn host_with_copy(model: &FakeModel, prefix: &str) -> (TestHost, Staged) {
    let staging = tempfile::tempdir().unwrap();
    let component = staging.path().join("misbehave.wasm");
    std::fs::copy(plugin_wasm("misbehave"), &component).unwrap();
    let block =
        format!("[[plugin]]\npath = \"{}\"\n[plugin.config]\nprefix = \"{prefix}\"\n", component.display());
    let test = TestHost::new(&config_text(&model.url(), &block)).await.unwrap();
    (test, Staged { component, _folder: staging })
}

/// The private copy of a component, in a folder that goes when this is dropped: keep it
/// bound (`_copy` where unused) while the host runs.
struct Staged {
    component: std::path::PathBuf,
    _folder: tempfile::TempDir,
}

impl AsRef<std::path::Path> for Staged {
    fn as_ref(&self) -> &std::path::Path {
        &self.component
    }
}

fn rewrite_prefix(test: &TestHost, from: &str, to: &str) {
    let path = test.dir.path().join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace(&format!("prefix = \"{from}\""), &format!("prefix = \"{to}\"")))
        .unwrap();
}

#[tokio::test]
async fn a_config_change_applies_on_reload_and_the_session_keeps_its_state() {
    let model = FakeModel::start().await;
    let (test, _copy) = host_with_copy(&model, "v1 ").await;
    let session = test.session();
    test.host
        .invoke_tool(&mut *session.lock().await, "remember", &json!({"key": "k", "value": 7}), &NoEvents)
        .await
        .unwrap();
    assert!(
        test.system_prompt_of_a_turn(&model, &session, "hi").await.ends_with("v1 misbehave instructions")
    );

    rewrite_prefix(&test, "v1 ", "v2 ");
    test.host.reload(&*test.events).await.unwrap();
    assert!(
        test.system_prompt_of_a_turn(&model, &session, "hi").await.ends_with("v2 misbehave instructions")
    );
    let recalled =
        test.host.invoke_tool(&mut *session.lock().await, "recall", &json!({}), &NoEvents).await.unwrap();
    assert_eq!(recalled.output, r#"{"k":7}"#, "state survives the swap");
    assert!(
        test.take_events()
            .iter()
            .any(|e| matches!(e, Event::PluginLoaded { plugin, .. } if plugin == "misbehave@0.1.0"))
    );
}

#[tokio::test]
async fn an_unchanged_reload_reuses_the_loaded_plugin() {
    let model = FakeModel::start().await;
    let (test, _copy) = host_with_copy(&model, "").await;
    let before = test.host.plugins().plugins()[0].clone();
    test.host.reload(&NoEvents).await.unwrap();
    assert!(Arc::ptr_eq(&before, &test.host.plugins().plugins()[0]), "nothing changed, nothing reloaded");
}

#[tokio::test]
async fn a_broken_or_half_written_component_is_rejected_and_the_old_one_serves() {
    let model = FakeModel::start().await;
    let (test, component) = host_with_copy(&model, "").await;
    let session = test.session();
    let good = std::fs::read(&component).unwrap();
    // Half a component: what a reader sees while a copy is still in progress.
    std::fs::write(&component, &good[..good.len() / 2]).unwrap();
    let error = test.host.reload(&*test.events).await.unwrap_err().to_string();
    assert!(error.contains("not a valid component"), "{error}");
    assert!(test.take_events().iter().any(|e| matches!(e, Event::PluginRejected { .. })));
    let echo = test
        .host
        .invoke_tool(&mut *session.lock().await, "echo", &json!({"text": "old"}), &NoEvents)
        .await
        .unwrap();
    assert_eq!(echo.output, "old", "the old version keeps serving");
    assert!(test.host.reload_status().error.is_some());
    std::fs::write(&component, &good).unwrap();
    test.host.reload(&NoEvents).await.unwrap();
    assert!(test.host.reload_status().error.is_none());
}

#[tokio::test]
async fn a_bad_config_edit_is_rejected_with_its_line() {
    let model = FakeModel::start().await;
    let (test, _copy) = host_with_copy(&model, "").await;
    let path = test.dir.path().join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("max_iterations = 6", "max_iterations = \"six\"")).unwrap();
    let error = test.host.reload(&NoEvents).await.unwrap_err().to_string();
    assert!(error.contains("config.toml:2: `agent.max_iterations`"), "{error}");
    assert_eq!(test.host.config().agent.max_iterations, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_reloads_after_the_config_file_is_saved() {
    let model = FakeModel::start().await;
    let (test, _copy) = host_with_copy(&model, "before ").await;
    let _watcher = agent_host::reload::watch(test.host.clone(), test.events.clone()).unwrap();
    rewrite_prefix(&test, "before ", "after ");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let config = test.host.plugins().plugins()[0].config().to_owned();
        if config.contains("after ") {
            break;
        }
        assert!(Instant::now() < deadline, "the watcher did not reload within 20 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reloads_under_concurrent_sessions_lose_nothing() {
    let model = FakeModel::start().await;
    model.fallback(Reply::text("done"));
    for _ in 0..40 {
        model.push(Reply::tool("remember", r#"{"key":"turn","value":1}"#));
    }
    let (test, _copy) = host_with_copy(&model, "a ").await;
    let test = Arc::new(test);
    let mut sessions = Vec::new();
    for _ in 0..8 {
        let test = test.clone();
        sessions.push(tokio::spawn(async move {
            let session = test.session();
            for turn in 0..5 {
                test.turn(&session, &format!("turn {turn}")).await.expect("no turn fails during reloads");
            }
            let session = session.lock().await;
            (
                session.history().iter().filter(|m| m.role == agent_host::model::Role::User).count(),
                session.id().to_owned(),
            )
        }));
    }
    for round in 0..6 {
        let (from, to) = if round % 2 == 0 { ("a ", "b ") } else { ("b ", "a ") };
        rewrite_prefix(&test, from, to);
        test.host.reload(&NoEvents).await.expect("every reload succeeds");
        tokio::task::yield_now().await;
    }
    for handle in sessions {
        let (prompts, id) = handle.await.unwrap();
        assert_eq!(prompts, 5, "session {id} kept all its turns");
    }
    let failures = test.take_events().into_iter().filter(|e| matches!(e, Event::Error { .. })).count();
    assert_eq!(failures, 0);
}

#[tokio::test]
async fn a_restart_takes_components_from_the_compile_cache() {
    let model = FakeModel::start().await;
    // The cache keeps its key beside its folder: both inside the temporary one.
    let scratch = tempfile::tempdir().unwrap();
    let config = config_text(&model.url(), &crate::support::plugin_block("misbehave", "")).replace(
        &crate::support::shared_cache_dir().display().to_string(),
        &scratch.path().join("cache").display().to_string(),
    );
    let first = TestHost::new(&config).await.unwrap();
    assert!(!first.host.plugins().plugins()[0].cache_hit(), "an empty cache compiles");
    drop(first);
    let second = TestHost::new(&config).await.unwrap();
    assert!(second.host.plugins().plugins()[0].cache_hit(), "a restart loads the precompiled artifact");
}

#[tokio::test]
async fn the_plugins_and_reload_commands_show_what_serves_and_the_last_error() {
    let model = FakeModel::start().await;
    let (test, component) = host_with_copy(&model, "").await;
    let session = test.session();
    let mut session = session.lock().await;
    let serving = test.host.plugins().plugins()[0].identity().clone();
    let listed = format!("{}  sha256:{}", serving.path.display(), &serving.hash[..12]);
    let table = test.host.command(&mut session, "/plugins", &NoEvents).await.unwrap();
    assert!(table.starts_with("misbehave@0.1.0") && table.contains(&listed), "{table}");
    assert!(!table.contains("last reload error"), "{table}");

    std::fs::write(&component, b"not a component").unwrap();
    let refused = test.host.command(&mut session, "/reload", &NoEvents).await.unwrap_err();
    assert!(refused.starts_with("reload rejected, the current plugins keep serving"), "{refused}");
    assert!(refused.contains("not a valid component"), "{refused}");
    let table = test.host.command(&mut session, "/plugins", &NoEvents).await.unwrap();
    assert!(table.contains(&listed), "the old version still serves: {table}");
    assert!(table.contains("last reload error:") && table.contains("not a valid component"), "{table}");
}

#[tokio::test]
async fn a_limits_change_in_the_runtime_section_applies_on_reload() {
    let model = FakeModel::start().await;
    let limits = |kb: u32| format!("[runtime]\nlimits = {{ memory_mb = 128, max_output_kb = {kb} }}\n");
    let config = config_text(&model.url(), &crate::support::plugin_block("misbehave", ""));
    let test = TestHost::new(&config.replace("[runtime]\n", &limits(64))).await.unwrap();
    let session = test.session();
    let flood = || async {
        let mut session = session.lock().await;
        test.host.invoke_tool(&mut session, "flood", &json!({}), &NoEvents).await.unwrap().output
    };
    assert!(flood().await.contains("[output cut: 65536 of"));
    std::fs::write(test.dir.path().join("config.toml"), config.replace("[runtime]\n", &limits(16))).unwrap();
    test.host.reload(&NoEvents).await.unwrap();
    assert!(flood().await.contains("[output cut: 16384 of"), "the plugin runs under the new limit");
}

/// A reload that lands while a model call is in flight applies from the next round trip on:
/// the reply's tool call is decided on the config its round trip was prepared with, not on
/// the one swapped in meanwhile (here `agent.on_ask`, which decides an ask nobody answers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_during_a_model_call_applies_from_the_next_round_trip() {
    let model = FakeModel::start().await;
    let in_flight = Arc::new(tokio::sync::Notify::new());
    // An ask nobody answers ends the turn after its tool batch, so one reply per turn.
    model.push(Reply::tool("touch", "{}").held_until(&in_flight));
    // Misbehave's `touch` is mutating, so the permissions plugin's default asks for it.
    let plugins = format!("{}{}", plugin_block("misbehave", ""), plugin_block("permissions", ""));
    let test = Arc::new(TestHost::with_plugins(&model, &plugins).await);
    let session = test.session();
    let turn = tokio::spawn({
        let (test, session) = (test.clone(), session.clone());
        async move { test.turn(&session, "touch it").await.expect("the turn runs") }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while model.requests().is_empty() {
        assert!(Instant::now() < deadline, "the model call was never made");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let path = test.dir.path().join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("[agent]\n", "[agent]\non_ask = \"allow\"\n", 1)).unwrap();
    test.host.reload(&NoEvents).await.expect("the reload succeeds");
    in_flight.notify_one();
    turn.await.unwrap();
    assert_eq!(touch_results(&test), [(false, true)], "refused under the snapshot's on_ask = \"deny\"");

    model.push(Reply::tool("touch", "{}"));
    test.turn(&session, "touch it again").await.unwrap();
    assert_eq!(touch_results(&test), [(true, false)], "the next round trip runs on the reloaded config");
}

/// Each `touch` result since the last call: whether it ran, and whether it was refused for
/// want of an answer.
fn touch_results(test: &TestHost) -> Vec<(bool, bool)> {
    let results = test.take_events().into_iter().filter_map(|event| match event {
        Event::ToolResult { name, ok, output, .. } if name == "touch" => {
            Some((ok, output.contains("nobody could answer")))
        }
        _ => None,
    });
    results.collect()
}

/// `[model]` is read at start-up only (the client and its token budget live as long as the
/// host): a reload after an edit there keeps the running model in every part of the
/// deployment, and says plainly that the edit waits for a restart, until the file agrees
/// with what runs again.
#[tokio::test]
async fn a_model_edit_waits_for_a_restart_and_the_reload_says_so() {
    let model = FakeModel::start().await;
    model.fallback(Reply::text("ok"));
    let (test, _copy) = host_with_copy(&model, "").await;
    let session = test.session();
    let path = test.dir.path().join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("model = \"fake\"", "model = \"fake-2\"")).unwrap();

    let answer = test.host.command(&mut *session.lock().await, "/reload", &NoEvents).await.unwrap();
    assert!(
        answer.contains("[model] in config.toml changed; it applies when agent-host starts again"),
        "{answer}"
    );
    assert!(answer.contains("the model in use stays fake at http://127.0.0.1:"), "{answer}");
    assert_eq!(test.host.config().model.model, "fake", "the deployment runs on one [model] throughout");
    test.turn(&session, "hi").await.unwrap();
    assert_eq!(model.requests().last().unwrap()["model"], "fake");
    let table = test.host.command(&mut *session.lock().await, "/plugins", &NoEvents).await.unwrap();
    assert!(table.contains("[model] in config.toml changed"), "{table}");

    std::fs::write(&path, text).unwrap();
    let answer = test.host.command(&mut *session.lock().await, "/reload", &NoEvents).await.unwrap();
    assert!(!answer.contains("[model]"), "the file agrees with what runs again: {answer}");
}
