//! Leaving a read-only mode: the model's own switch out of one asks the operator unless the
//! mode says `model_may_leave`, and a reply that switches cannot also change things in the
//! same reply, asked or not; the operator's `/mode` lifts it without a question, leaving a
//! mode that allows changes is free, and configs written before `model_may_leave` load.

use agent_host::Event;
use agent_host::agent::SessionHandle;
use agent_host::agent::{ApprovalAnswer, NoOperator};
use serde_json::{Value, json};

use super::{LEAVABLE_PLAN, command, load_error};
use crate::support::{FakeModel, Reply, ScriptedApprover, TestHost, plugin_block};

/// agent-mode (with `extra` config) beside the fs plugin on an empty workspace it may write.
async fn host_with_fs(model: &FakeModel, extra: &str) -> (TestHost, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    let grant = format!(
        "[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}",
        workspace.path().display()
    );
    let plugins = format!("{}{}", plugin_block("agent-mode", extra), plugin_block("fs", &grant));
    (TestHost::with_plugins(model, &plugins).await, workspace)
}

/// The reply of item 8: switch to `execute` and write a file, in one go.
fn switch_and_write() -> Reply {
    Reply::tool("mode_set", r#"{"mode":"execute"}"#)
        .and_tool("write_file", r#"{"path":"/workspace/out.txt","content":"written"}"#)
}

fn write_reply() -> Reply {
    Reply::tool("write_file", r#"{"path":"/workspace/out.txt","content":"written"}"#)
}

/// The tool results of the collected events, by tool name, in order.
fn results(events: &[Event]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolResult { name, ok, output, .. } => Some((name.clone(), *ok, output.clone())),
            _ => None,
        })
        .collect()
}

async fn mode_of(session: &SessionHandle) -> Option<Value> {
    session.lock().await.bag().get_json("agent-mode", "mode")
}

#[tokio::test]
async fn a_reply_that_switches_out_of_plan_and_writes_asks_about_the_switch_and_writes_nothing() {
    let model = FakeModel::start().await;
    model.push(switch_and_write());
    model.push(Reply::text("done"));
    let (test, workspace) = host_with_fs(&model, "").await;
    let session = test.session();
    // No operator, and the stock `agent.on_ask = "deny"`.
    test.turn(&session, "write it").await.unwrap();

    let events = test.take_events();
    let asked: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|event| match event {
            Event::ApprovalRequested { name, reason, asked_by, .. } => {
                Some((name.as_str(), reason.as_str())).filter(|_| asked_by.starts_with("agent-mode"))
            }
            _ => None,
        })
        .collect();
    assert_eq!(asked.len(), 1, "the operator is asked about the switch, once: {events:?}");
    assert_eq!(asked[0].0, "mode_set");
    assert!(asked[0].1.contains("`plan`") && asked[0].1.contains("`execute`"), "{}", asked[0].1);
    let results = results(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(!results[0].1 && results[0].2.contains("nobody could answer"), "switch refused: {results:?}");
    assert!(!results[1].1 && results[1].2.contains("`plan`"), "write refused in plan: {results:?}");
    // The default mode is not written down, so "still plan" is "never switched".
    assert_eq!(mode_of(&session).await, None, "the mode stays plan");
    assert!(!workspace.path().join("out.txt").exists(), "nothing was written");
}

#[tokio::test]
async fn a_mode_the_model_may_leave_switches_without_asking_but_the_same_reply_still_cannot_write() {
    let model = FakeModel::start().await;
    model.push(switch_and_write());
    model.push(Reply::text("switched"));
    model.push(write_reply());
    model.push(Reply::text("written"));
    let (test, workspace) = host_with_fs(&model, LEAVABLE_PLAN).await;
    let session = test.session();
    let nobody = ScriptedApprover::new([]);
    test.host.run_turn(&mut *session.lock().await, "switch and write", &*test.events, &nobody).await.unwrap();

    assert!(nobody.asked().is_empty(), "nobody was asked: {:?}", nobody.asked());
    assert_eq!(mode_of(&session).await, Some(json!("execute")), "the switch went through");
    let results = results(&test.take_events());
    assert!(results[0].1, "{results:?}");
    assert!(!results[1].1, "the write in the switching reply is refused: {results:?}");
    assert!(results[1].2.contains("switched out of the read-only mode `plan`"), "{}", results[1].2);
    assert!(!workspace.path().join("out.txt").exists(), "nothing was written in the switching reply");

    test.turn(&session, "now write").await.unwrap();
    assert_eq!(std::fs::read_to_string(workspace.path().join("out.txt")).unwrap(), "written");
}

#[tokio::test]
async fn an_approved_switch_still_keeps_its_own_reply_from_writing_and_the_next_reply_may() {
    let model = FakeModel::start().await;
    model.push(switch_and_write());
    model.push(write_reply());
    model.push(Reply::text("written"));
    let (test, workspace) = host_with_fs(&model, "").await;
    let session = test.session();
    let operator = ScriptedApprover::new([ApprovalAnswer::AllowOnce]);
    test.host
        .run_turn(&mut *session.lock().await, "switch and write", &*test.events, &operator)
        .await
        .unwrap();

    let asked = operator.asked();
    assert_eq!(asked.len(), 1, "asked once, about the switch only: {asked:?}");
    assert_eq!(asked[0].0, "mode_set");
    assert!(asked[0].1.contains("may not leave"), "the reason says why: {}", asked[0].1);
    let results = results(&test.take_events());
    let names: Vec<(&str, bool)> = results.iter().map(|(name, ok, _)| (name.as_str(), *ok)).collect();
    assert_eq!(names, [("mode_set", true), ("write_file", false), ("write_file", true)], "{results:?}");
    assert!(results[1].2.contains("next reply"), "{}", results[1].2);
    assert_eq!(std::fs::read_to_string(workspace.path().join("out.txt")).unwrap(), "written");
    assert_eq!(mode_of(&session).await, Some(json!("execute")));
}

#[tokio::test]
async fn the_operators_mode_command_lifts_plan_without_a_question() {
    let model = FakeModel::start().await;
    model.push(write_reply());
    model.push(Reply::text("refused"));
    model.push(write_reply());
    model.push(Reply::text("written"));
    let (test, workspace) = host_with_fs(&model, "").await;
    let session = test.session();
    test.turn(&session, "write").await.unwrap();
    assert!(!workspace.path().join("out.txt").exists(), "plan refuses the write");

    assert_eq!(command(&test, &session, "/mode execute").await.unwrap(), "", "the view shows the switch");
    let nobody = ScriptedApprover::new([]);
    test.host.run_turn(&mut *session.lock().await, "write now", &*test.events, &nobody).await.unwrap();
    assert!(nobody.asked().is_empty());
    assert_eq!(std::fs::read_to_string(workspace.path().join("out.txt")).unwrap(), "written");
}

#[tokio::test]
async fn leaving_execute_is_not_asked_and_older_configs_without_the_key_load() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("mode_set", r#"{"mode":"plan"}"#));
    model.push(Reply::text("planning"));
    // CUSTOM-like config written before `model_may_leave` existed.
    let old = "[plugin.config]\n[[plugin.config.modes]]\nname = \"plan\"\ndescription = \"p\"\nallow_mutating = false\n[[plugin.config.modes]]\nname = \"execute\"\ndescription = \"e\"\n";
    let (test, _workspace) = host_with_fs(&model, old).await;
    let session = test.session();
    command(&test, &session, "/mode execute").await.unwrap();
    test.host
        .run_turn(&mut *session.lock().await, "back to planning", &*test.events, &NoOperator)
        .await
        .unwrap();
    assert_eq!(mode_of(&session).await, Some(json!("plan")), "leaving a mode that allows changes is free");
    assert!(
        !test.take_events().iter().any(|event| matches!(event, Event::ApprovalRequested { .. })),
        "nobody is asked"
    );
    let error =
        load_error("[[plugin.config.modes]]\nname = \"a\"\ndescription = \"d\"\nmodel_may_leave = \"yes\"")
            .await;
    assert!(error.contains("model_may_leave") || error.contains("invalid type"), "{error}");
}
