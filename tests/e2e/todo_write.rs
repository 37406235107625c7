//! The `todo-write` plugin: snapshot writes and their validation, the rendered list, the
//! first-call reminder, the nag after quiet rounds, `/todos`, events and the completion loop.

use agent_host::Event;
use agent_host::agent::SessionHandle;
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, plugin_block};

async fn host_with(model: &FakeModel, extra: &str) -> TestHost {
    TestHost::with_plugins(model, &plugin_block("todo-write", extra)).await
}

async fn write(test: &TestHost, session: &SessionHandle, todos: Value) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, "TodoWrite", &json!({ "todos": todos }), &*test.events).await.unwrap()
}

async fn stored(session: &SessionHandle) -> Option<Value> {
    session.lock().await.bag().get_json("todo-write", "todos")
}

fn item(content: &str, status: &str, active: &str) -> Value {
    json!({"content": content, "status": status, "activeForm": active})
}

/// Every injected or system message text of one request.
fn texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_write_stores_the_snapshot_and_renders_it() {
    let model = FakeModel::start().await;
    let test = host_with(&model, "").await;
    let session = test.session();
    let result = write(
        &test,
        &session,
        json!([
            item("Read the code", "completed", "Reading the code"),
            item("Fix the bug", "in_progress", "Fixing the bug"),
            item("Run the tests", "pending", "Running the tests"),
        ]),
    )
    .await;
    assert!(result.ok, "{}", result.output);
    assert_eq!(
        result.output,
        "[x] Read the code\n[>] Fix the bug <- Fixing the bug\n[ ] Run the tests\n(1/3 completed)"
    );
    let todos = stored(&session).await.unwrap();
    assert_eq!(
        todos[1],
        json!({"id": "2", "content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"})
    );

    // A resend keeps given ids; new items get fresh ones, never reusing old ones.
    let mut kept = todos[0].clone();
    kept["status"] = json!("completed");
    let result = write(&test, &session, json!([kept, item("Ship", "pending", "Shipping")])).await;
    assert!(result.ok, "{}", result.output);
    let todos = stored(&session).await.unwrap();
    assert_eq!(todos[0]["id"], "1");
    assert_eq!(todos[1]["id"], "4");

    let payloads: Vec<Value> = test
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Plugin { kind, payload, .. } if kind == "todos-changed" => Some(payload.value()),
            _ => None,
        })
        .collect();
    assert_eq!(payloads.len(), 2);
    assert_eq!(payloads[1], json!({"items": todos}));

    let mut locked = session.lock().await;
    let shown = test.host.command(&mut locked, "/todos", &*test.events).await.unwrap();
    assert_eq!(shown, "todos 1/2\n  ✓ Read the code\n  ○ Ship");
}

#[tokio::test]
async fn a_rejected_write_names_the_item_and_changes_nothing() {
    let model = FakeModel::start().await;
    let test = host_with(&model, "[plugin.config]\nmax_items = 2\n").await;
    let session = test.session();
    assert!(write(&test, &session, json!([item("Keep me", "pending", "Keeping")])).await.ok);
    let before = stored(&session).await;

    let blank =
        write(&test, &session, json!([item("ok", "pending", "ok"), item("Tidy up", "pending", "  ")])).await;
    assert!(!blank.ok);
    assert!(
        blank.output.contains("item 2 (\"Tidy up\")") && blank.output.contains("activeForm"),
        "{}",
        blank.output
    );

    let empty = write(&test, &session, json!([item("  ", "pending", "x")])).await;
    assert!(
        !empty.ok && empty.output.contains("item 1") && empty.output.contains("content"),
        "{}",
        empty.output
    );

    let too_many = write(
        &test,
        &session,
        json!([item("a", "pending", "a"), item("b", "pending", "b"), item("c", "pending", "c")]),
    )
    .await;
    assert!(!too_many.ok && too_many.output.contains("at most 2"), "{}", too_many.output);

    let twice = write(
        &test,
        &session,
        json!([{"id": "7", "content": "a", "status": "pending", "activeForm": "a"},
               {"id": "7", "content": "b", "status": "pending", "activeForm": "b"}]),
    )
    .await;
    assert!(!twice.ok && twice.output.contains("item 2") && twice.output.contains("`7`"), "{}", twice.output);

    assert_eq!(stored(&session).await, before, "rejected writes leave the list as it was");
    assert_eq!(session.lock().await.bag().get_json("todo-write", "next_id"), Some(json!(2)));
}

#[tokio::test]
async fn the_first_call_gets_a_reminder_and_quiet_rounds_get_a_nag() {
    let model = FakeModel::start().await;
    let test =
        host_with(&model, "[plugin.config]\nnag_after_rounds = 2\n[plugin.config.loop]\nenabled = false\n")
            .await;
    let session = test.session();
    for _ in 0..4 {
        model.push(Reply::text("ok"));
        test.turn(&session, "hi").await.unwrap();
    }
    let requests = model.requests();
    let mentions = |i: usize, needle: &str| texts(&requests[i]).iter().any(|t| t.contains(needle));
    assert!(mentions(0, "plan it with TodoWrite"), "the first call gets the reminder");
    assert!(!mentions(1, "plan it with TodoWrite") && !mentions(1, "has not been updated"));
    assert!(mentions(2, "has not been updated for 2 model calls"), "{:?}", texts(&requests[2]));
    assert!(!mentions(3, "has not been updated"), "one nag per quiet stretch, not every call");

    // A write resets the count.
    assert!(write(&test, &session, json!([item("a", "pending", "a")])).await.ok);
    model.push(Reply::text("ok"));
    test.turn(&session, "hi").await.unwrap();
    assert!(!texts(&model.requests()[4]).iter().any(|t| t.contains("has not been updated")));
}

/// The model's own write, in the reply to a call: the nag comes after exactly
/// `nag_after_rounds` calls without one, not one call early.
#[tokio::test]
async fn after_the_models_own_write_the_nag_waits_for_n_quiet_calls() {
    let model = FakeModel::start().await;
    let test =
        host_with(&model, "[plugin.config]\nnag_after_rounds = 2\n[plugin.config.loop]\nenabled = false\n")
            .await;
    let session = test.session();
    // Call 1 writes the list; call 2 follows with the write's result.
    model
        .push(Reply::tool("TodoWrite", r#"{"todos":[{"content":"a","status":"pending","activeForm":"a"}]}"#));
    model.push(Reply::text("planned"));
    test.turn(&session, "plan").await.unwrap();
    for _ in 0..2 {
        model.push(Reply::text("ok"));
        test.turn(&session, "hi").await.unwrap();
    }
    let requests = model.requests();
    let nagged = |i: usize| texts(&requests[i]).iter().any(|t| t.contains("has not been updated"));
    assert!(!nagged(1), "call 2 comes right after the write");
    assert!(!nagged(2), "call 3 comes after one quiet call (2)");
    assert!(
        texts(&requests[3]).iter().any(|t| t.contains("has not been updated for 2 model calls")),
        "call 4 comes after two quiet calls (2 and 3): {:?}",
        texts(&requests[3])
    );
}

#[tokio::test]
async fn the_loop_continues_while_items_are_not_completed() {
    let model = FakeModel::start().await;
    let test = host_with(&model, "").await;
    let session = test.session();
    assert!(write(&test, &session, json!([item("Fix it", "in_progress", "Fixing it")])).await.ok);
    model.push(Reply::text("done?"));
    model.push(Reply::tool(
        "TodoWrite",
        r#"{"todos":[{"id":"1","content":"Fix it","status":"completed","activeForm":"Fixing it"}]}"#,
    ));
    model.push(Reply::text("done"));
    test.turn(&session, "fix it").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let last_user = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_owned();
    assert!(last_user.contains("[>] Fix it <- Fixing it"), "{last_user}");
}

#[tokio::test]
async fn loop_modes_without_mode_plugin_is_refused() {
    let model = FakeModel::start().await;
    let config = config_text(
        &model.url(),
        &plugin_block("todo-write", "[plugin.config.loop]\nmodes = [\"execute\"]\n"),
    );
    let error = TestHost::new(&config).await.err().expect("the load fails").to_string();
    assert!(error.contains("loop.modes") && error.contains("loop.mode_plugin"), "{error}");
}

/// The mode lives in the `misbehave` test plugin's namespace: the host only grants reads of
/// namespaces a loaded plugin owns, and misbehave never writes a `mode` key itself.
#[tokio::test]
async fn the_loop_runs_only_in_the_listed_modes() {
    let model = FakeModel::start().await;
    let config = "[plugin.config.loop]\nmodes = [\"execute\"]\nmode_plugin = \"misbehave\"\n\
                  [plugin.grants]\nread_state = [\"misbehave\"]\n";
    let plugins = format!("{}{}", plugin_block("todo-write", config), plugin_block("misbehave", ""));
    let test = TestHost::with_plugins(&model, &plugins).await;
    let session = test.session();
    assert!(write(&test, &session, json!([item("a", "pending", "a")])).await.ok);

    session.lock().await.bag().put("misbehave", "mode", Some("\"plan\"".into()));
    model.push(Reply::text("planned"));
    test.turn(&session, "plan").await.unwrap();
    assert_eq!(model.requests().len(), 1, "no loop in plan mode");

    session.lock().await.bag().put("misbehave", "mode", Some("\"execute\"".into()));
    model.push(Reply::text("executed?"));
    model.push(Reply::tool("TodoWrite", r#"{"todos":[]}"#));
    model.push(Reply::text("executed"));
    test.turn(&session, "execute").await.unwrap();
    assert_eq!(model.requests().len(), 4, "one continue in execute mode, none once the list is empty");
}
