//! Swapping one plugin for another in config.toml while sessions are open: the next model
//! call sees the new plugin's tools and instructions, every session keeps its whole state
//! bag (the old plugin's namespace too), and swapping back picks up where it left off.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_host::Event;
use agent_host::agent::SessionHandle;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::support::{FakeModel, Reply, TestHost, config_text, plugin_block, system_prompt};

/// Rewrites config.toml to run `plugins` and reloads, as an operator saving the file would.
async fn redeploy(test: &TestHost, model: &FakeModel, plugins: &str) {
    std::fs::write(test.dir.path().join("config.toml"), config_text(&model.url(), plugins)).unwrap();
    test.host.reload(&*test.events).await.expect("the new deployment loads");
}

/// The tool names offered in one model request, sorted.
fn offered(request: &Value) -> Vec<String> {
    let mut names: Vec<String> = request["tools"]
        .as_array()
        .map(|tools| tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// Every message text of one request that contains `needle`.
fn messages_with<'r>(request: &'r Value, needle: &str) -> Vec<&'r str> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .filter(|c| c.contains(needle))
        .collect()
}

/// Nothing failed: no error event, every tool result ok. Returns the tools that ran.
fn assert_nothing_failed(test: &TestHost) -> Vec<String> {
    let events = test.take_events();
    let errors: Vec<&Event> = events.iter().filter(|e| matches!(e, Event::Error { .. })).collect();
    assert!(errors.is_empty(), "{errors:?}");
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { name, ok, output, .. } => {
                assert!(ok, "{name} failed: {output}");
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

async fn command(test: &TestHost, session: &SessionHandle, line: &str) -> String {
    let mut session = session.lock().await;
    test.host.command(&mut session, line, &*test.events).await.unwrap()
}

/// The completion loop would keep each turn going while todos are open; these turns are
/// about the swap, so each ends with the model's reply.
const NO_LOOP: &str = "[plugin.config.loop]\nenabled = false\n";

const TODO_TOOLS: [&str; 5] =
    ["todos_add", "todos_complete", "todos_get_all", "todos_get_remaining", "todos_remove"];

#[tokio::test]
async fn todo_and_todo_write_swap_under_open_sessions_and_keep_their_lists() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("todos_add", r#"{"todos":[{"title":"read the log"},{"title":"fix the bug"}]}"#));
    model.push(Reply::text("Two todos."));
    model.push(Reply::tool(
        "TodoWrite",
        r#"{"todos":[{"content":"ship it","status":"in_progress","activeForm":"Shipping it"}]}"#,
    ));
    model.push(Reply::text("Written."));
    model.push(Reply::text("Back on the old list."));
    let test = TestHost::with_plugins(&model, &plugin_block("todo", NO_LOOP)).await;
    let session = test.session();
    let other = test.session();
    test.turn(&session, "plan the fix").await.unwrap();
    let mut locked = other.lock().await;
    let added = test
        .host
        .invoke_tool(&mut locked, "todos_add", &json!({"todos": [{"title": "other work"}]}), &*test.events)
        .await
        .unwrap();
    assert!(added.ok, "{added:?}");
    drop(locked);
    let todo_items = session.lock().await.bag().get_json("todo", "items").expect("the todo plugin wrote");

    redeploy(&test, &model, &plugin_block("todo-write", NO_LOOP)).await;
    test.turn(&session, "now with snapshots").await.unwrap();
    let locked = session.lock().await;
    let bag = locked.bag();
    assert_eq!(bag.get_json("todo", "items"), Some(todo_items.clone()), "the old namespace is kept");
    assert_eq!(bag.get_json("todo-write", "todos").unwrap()[0]["content"], "ship it");
    drop(locked);

    redeploy(&test, &model, &plugin_block("todo", NO_LOOP)).await;
    test.turn(&session, "and back").await.unwrap();
    assert_eq!(command(&test, &other, "/todos").await, "todos 0/1\n  ○ other work");

    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    for (i, request) in requests.iter().enumerate() {
        let expected: Vec<&str> = if matches!(i, 2 | 3) { vec!["TodoWrite"] } else { TODO_TOOLS.to_vec() };
        assert_eq!(offered(request), expected, "request {i}");
    }
    assert!(system_prompt(&requests[2]).contains("TodoWrite"), "todo-write's instructions");
    let restored = messages_with(&requests[4], "### Current todo list");
    assert_eq!(restored.len(), 1, "swapped back, the list is injected again");
    assert!(restored[0].contains("read the log") && restored[0].contains("fix the bug"), "{}", restored[0]);
    assert!(!restored[0].contains("other work"), "sessions stay apart: {}", restored[0]);
    assert_eq!(session.lock().await.bag().get_json("todo", "items"), Some(todo_items));
    assert_eq!(assert_nothing_failed(&test), ["todos_add", "todos_add", "TodoWrite"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_in_flight_during_a_swap_runs_on_the_plugins_that_offered_it() {
    let model = FakeModel::start().await;
    let gate = Arc::new(Notify::new());
    model.push(Reply::tool("todos_add", r#"{"todos":[{"title":"read the log"}]}"#).held_until(&gate));
    model.push(Reply::text("Noted."));
    let test = Arc::new(TestHost::with_plugins(&model, &plugin_block("todo", NO_LOOP)).await);
    let session = test.session();
    let turn = tokio::spawn({
        let (test, session) = (test.clone(), session.clone());
        async move { test.turn(&session, "plan the fix").await }
    });
    // The model has been asked (offered the todo tools) and has not answered yet.
    let deadline = Instant::now() + Duration::from_secs(20);
    while model.requests().is_empty() {
        assert!(Instant::now() < deadline, "the turn never called the model");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    redeploy(&test, &model, &plugin_block("todo-write", NO_LOOP)).await;
    gate.notify_one();
    turn.await.unwrap().expect("the turn survives the swap");

    let requests = model.requests();
    assert_eq!(offered(&requests[0]), TODO_TOOLS);
    assert_eq!(offered(&requests[1]), ["TodoWrite"], "the next model call sees the new plugin");
    assert_eq!(assert_nothing_failed(&test), ["todos_add"], "the call in flight ran on the old set");
    let items = session.lock().await.bag().get_json("todo", "items").unwrap();
    assert_eq!(items[0]["title"], "read the log");
}

const GRANT: &str = "[plugin.grants]\nread_state = [\"todo\"]\n";

fn stock_modes() -> String {
    format!("{}{}", plugin_block("agent-mode", ""), plugin_block("todo", ""))
}

fn custom_modes() -> String {
    format!("{}{}", plugin_block("triage-modes", GRANT), plugin_block("todo", ""))
}

#[tokio::test]
async fn the_stock_mode_plugin_and_a_custom_one_swap_under_an_open_session() {
    let model = FakeModel::start().await;
    model.push(Reply::text("Executing."));
    model.push(Reply::tool("advance_stage", r#"{"to":"research"}"#));
    model.push(Reply::text("Researching."));
    model.push(Reply::text("Executing again."));
    let test = TestHost::with_plugins(&model, &stock_modes()).await;
    let session = test.session();
    command(&test, &session, "/mode execute").await;
    test.turn(&session, "go").await.unwrap();

    redeploy(&test, &model, &custom_modes()).await;
    test.turn(&session, "the build is red").await.unwrap();
    assert_eq!(
        session.lock().await.bag().get_json("agent-mode", "mode"),
        Some(json!("execute")),
        "the stock plugin's mode stays in the bag"
    );

    redeploy(&test, &model, &stock_modes()).await;
    test.turn(&session, "carry on").await.unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    for i in [0, 3] {
        assert!(system_prompt(&requests[i]).contains("The current mode is `execute`"), "request {i}");
        assert!(offered(&requests[i]).contains(&"mode_set".to_owned()), "request {i}");
        assert!(!offered(&requests[i]).contains(&"advance_stage".to_owned()), "request {i}");
    }
    for (i, stage) in [(1, "triage"), (2, "research")] {
        let prompt = system_prompt(&requests[i]);
        assert!(prompt.contains(&format!("You are in the `{stage}` stage")), "request {i}: {prompt}");
        assert!(!prompt.contains("The current mode is"), "request {i}: the stock plugin is gone");
        assert!(offered(&requests[i]).contains(&"advance_stage".to_owned()), "request {i}");
        assert!(!offered(&requests[i]).contains(&"mode_set".to_owned()), "request {i}");
    }
    let notices: usize = requests.iter().map(|r| messages_with(r, "[Mode changed:").len()).sum();
    assert_eq!(notices, 1, "only the operator's switch is announced, not the swaps");
    assert_eq!(assert_nothing_failed(&test), ["advance_stage"]);

    // Swapped in again, the custom plugin finds its stage where the session left it.
    redeploy(&test, &model, &custom_modes()).await;
    assert_eq!(command(&test, &session, "/stage").await, "stage: research");
}
