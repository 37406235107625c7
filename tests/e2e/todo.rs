//! The `todo` plugin: id and trimming rules, the counts its tools return, the list injected
//! before every model call, `/todos`, `todos-changed` events, the completion loop (and its
//! mode filter), and concurrent calls on one session.

use agent_host::Event;
use agent_host::agent::SessionHandle;
use agent_host::agent::TurnEnd;
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, paragraphs, plugin_block};

async fn host_with(model: &FakeModel, extra: &str) -> TestHost {
    TestHost::with_plugins(model, &plugin_block("todo", extra)).await
}

async fn host(extra: &str) -> TestHost {
    host_with(&FakeModel::start().await, extra).await
}

async fn call(test: &TestHost, session: &SessionHandle, tool: &str, args: Value) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.unwrap()
}

async fn ok(test: &TestHost, session: &SessionHandle, tool: &str, args: Value) -> String {
    let result = call(test, session, tool, args).await;
    assert!(result.ok, "{tool} failed: {}", result.output);
    result.output
}

async fn stored_items(session: &SessionHandle) -> Value {
    session.lock().await.bag().get_json("todo", "items").unwrap_or(Value::Null)
}

/// The content of the injected todo message in one model request, if any.
fn injected_list(request: &Value) -> Option<String> {
    paragraphs(request).into_iter().find(|c| c.starts_with("### Current todo list")).map(str::to_owned)
}

/// The last user message of one model request as the history holds it: without the
/// injected messages, which are sent as user text too (paragraphs after the user's own, or a
/// user message of their own after a tool result).
fn last_user_message(request: &Value) -> String {
    let injected = |paragraph: &&str| {
        paragraph.starts_with("### Current todo list") || *paragraph == "misbehave injected message"
    };
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .map(|content| content.split("\n\n").filter(|p| !injected(p)).collect::<Vec<_>>().join("\n\n"))
        .find(|own| !own.is_empty())
        .unwrap_or_default()
}

#[tokio::test]
async fn ids_start_at_one_and_are_never_reused() {
    let test = host("").await;
    let session = test.session();
    let added: Value = serde_json::from_str(
        &ok(&test, &session, "todos_add", json!({"todos": [{"title": "a"}, {"title": "b"}]})).await,
    )
    .unwrap();
    assert_eq!(
        added,
        json!([
            {"id": 1, "title": "a", "isComplete": false},
            {"id": 2, "title": "b", "isComplete": false}
        ])
    );
    assert_eq!(ok(&test, &session, "todos_remove", json!({"ids": [2]})).await, "1");
    let again: Value =
        serde_json::from_str(&ok(&test, &session, "todos_add", json!({"todos": [{"title": "c"}]})).await)
            .unwrap();
    assert_eq!(again[0]["id"], 3, "id 2 was removed but is not handed out again");
    assert_eq!(session.lock().await.bag().get_json("todo", "next_id"), Some(json!(4)));
}

#[tokio::test]
async fn titles_and_descriptions_are_trimmed_and_an_empty_title_is_refused() {
    let test = host("").await;
    let session = test.session();
    let added: Value = serde_json::from_str(
        &ok(
            &test,
            &session,
            "todos_add",
            json!({"todos": [{"title": "  Write tests \n", "description": "  the e2e ones  "}]}),
        )
        .await,
    )
    .unwrap();
    assert_eq!(
        added,
        json!([{"id": 1, "title": "Write tests", "description": "the e2e ones", "isComplete": false}])
    );

    let refused =
        call(&test, &session, "todos_add", json!({"todos": [{"title": "fine"}, {"title": "   "}]})).await;
    assert!(!refused.ok);
    assert!(refused.output.contains("title"), "{}", refused.output);
    assert_eq!(stored_items(&session).await.as_array().unwrap().len(), 1, "a refused call adds nothing");
}

#[tokio::test]
async fn complete_and_remove_count_only_real_changes() {
    let test = host("").await;
    let session = test.session();
    ok(&test, &session, "todos_add", json!({"todos": [{"title": "a"}, {"title": "b"}]})).await;
    let completed = ok(
        &test,
        &session,
        "todos_complete",
        json!({"items": [{"id": 1, "reason": "done"}, {"id": 1, "reason": "twice"}, {"id": 99, "reason": "?"}]}),
    )
    .await;
    assert_eq!(completed, "1");
    assert_eq!(
        ok(&test, &session, "todos_complete", json!({"items": [{"id": 1, "reason": "again"}]})).await,
        "0"
    );
    assert_eq!(ok(&test, &session, "todos_remove", json!({"ids": [99]})).await, "0");

    let remaining: Value =
        serde_json::from_str(&ok(&test, &session, "todos_get_remaining", json!({})).await).unwrap();
    assert_eq!(remaining, json!([{"id": 2, "title": "b", "isComplete": false}]));
    let all: Value = serde_json::from_str(&ok(&test, &session, "todos_get_all", json!({})).await).unwrap();
    assert_eq!(all[0]["isComplete"], true);
    assert_eq!(all.as_array().unwrap().len(), 2);

    assert_eq!(ok(&test, &session, "todos_remove", json!({"ids": [1, 2, 2]})).await, "2");
    assert_eq!(stored_items(&session).await, json!([]));
}

#[tokio::test]
async fn every_change_emits_todos_changed_with_the_items() {
    let test = host("").await;
    let session = test.session();
    ok(&test, &session, "todos_add", json!({"todos": [{"title": "a"}]})).await;
    ok(&test, &session, "todos_complete", json!({"items": [{"id": 1, "reason": "done"}]})).await;
    ok(&test, &session, "todos_complete", json!({"items": [{"id": 1, "reason": "no change"}]})).await;
    let payloads: Vec<Value> = test
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Plugin { kind, payload, .. } if kind == "todos-changed" => Some(payload.value()),
            _ => None,
        })
        .collect();
    assert_eq!(
        payloads,
        vec![
            json!({"items": [{"id": 1, "title": "a", "isComplete": false}]}),
            json!({"items": [{"id": 1, "title": "a", "isComplete": true}]}),
        ]
    );
}

#[tokio::test]
async fn the_list_is_injected_before_every_model_call() {
    let model = FakeModel::start().await;
    let test = host_with(&model, "[plugin.config.loop]\nenabled = false\n").await;
    let session = test.session();
    model.push(Reply::text("nothing yet"));
    test.turn(&session, "hello").await.unwrap();

    ok(
        &test,
        &session,
        "todos_add",
        json!({"todos": [{"title": "a", "description": "with detail"}, {"title": "b"}]}),
    )
    .await;
    ok(&test, &session, "todos_complete", json!({"items": [{"id": 2, "reason": "done"}]})).await;
    model.push(Reply::text("working"));
    test.turn(&session, "go on").await.unwrap();

    let requests = model.requests();
    assert_eq!(injected_list(&requests[0]).as_deref(), Some("### Current todo list\n- none yet"));
    assert_eq!(
        injected_list(&requests[1]).as_deref(),
        Some("### Current todo list\n- 1 [open] a: with detail\n- 2 [done] b")
    );
    let system = requests[0]["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.contains("break it into todos"), "the guidance is in the system prompt: {system}");
}

#[tokio::test]
async fn injection_can_be_switched_off_or_templated_and_instructions_replaced() {
    let model = FakeModel::start().await;
    let test =
        host_with(&model, "[plugin.config]\ninject_list = false\ninstructions = \"Use the list, or not.\"\n")
            .await;
    model.push(Reply::text("ok"));
    test.turn(&test.session(), "hi").await.unwrap();
    let request = &model.requests()[0];
    assert_eq!(injected_list(request), None);
    let system = request["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.contains("Use the list, or not.") && !system.contains("break it into todos"), "{system}");

    let model = FakeModel::start().await;
    let test = host_with(
        &model,
        "[plugin.config]\nitem_template = \"* #{id} {title} is {status} ({description})\"\n[plugin.config.loop]\nenabled = false\n",
    )
    .await;
    let session = test.session();
    ok(&test, &session, "todos_add", json!({"todos": [{"title": "a", "description": "d"}]})).await;
    model.push(Reply::text("ok"));
    test.turn(&session, "hi").await.unwrap();
    assert_eq!(
        injected_list(&model.requests()[0]).as_deref(),
        Some("### Current todo list\n* #1 a is open (d)")
    );
}

#[tokio::test]
async fn the_todos_command_renders_the_list() {
    let test = host("").await;
    let session = test.session();
    let mut locked = session.lock().await;
    assert_eq!(test.host.command(&mut locked, "/todos", &*test.events).await.unwrap(), "todos 0/0");
    drop(locked);
    ok(&test, &session, "todos_add", json!({"todos": [{"title": "a"}]})).await;
    let mut locked = session.lock().await;
    assert_eq!(test.host.command(&mut locked, "/todos", &*test.events).await.unwrap(), "todos 0/1\n  ○ a");
}

#[tokio::test]
async fn the_loop_continues_only_while_todos_remain_open() {
    let model = FakeModel::start().await;
    let test = host_with(&model, "").await;
    let session = test.session();
    ok(&test, &session, "todos_add", json!({"todos": [{"title": "ship it"}]})).await;
    model.push(Reply::text("I think I am done."));
    model.push(Reply::tool("todos_complete", r#"{"items":[{"id":1,"reason":"shipped"}]}"#));
    model.push(Reply::text("Now I am done."));
    let outcome = test.turn(&session, "ship it").await.unwrap();

    assert_eq!(outcome.end, TurnEnd::Done);
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "one continue, then the turn ends once nothing is open");
    let reminder = last_user_message(&requests[1]);
    assert!(reminder.contains("- 1 [open] ship it"), "the continue message lists the open todo: {reminder}");
    assert_eq!(last_user_message(&requests[2]), reminder, "no second continue once the list is done");
    assert!(
        test.take_events().iter().any(|e| matches!(e, Event::Continued { plugin, .. } if plugin == "todo"))
    );
}

#[tokio::test]
async fn the_loop_can_be_switched_off() {
    let model = FakeModel::start().await;
    let test = host_with(&model, "[plugin.config.loop]\nenabled = false\n").await;
    let session = test.session();
    ok(&test, &session, "todos_add", json!({"todos": [{"title": "open"}]})).await;
    model.push(Reply::text("stopping anyway"));
    assert_eq!(test.turn(&session, "go").await.unwrap().end, TurnEnd::Done);
    assert_eq!(model.requests().len(), 1);
}

/// The host refuses a grant for a namespace no loaded plugin owns, so the mode lives in the
/// `misbehave` test plugin's namespace here: stable, and it never writes a `mode` key itself.
#[tokio::test]
async fn the_loop_runs_only_in_the_listed_modes() {
    let config = "[plugin.config.loop]\nmodes = [\"execute\"]\nmode_plugin = \"misbehave\"\n\
                  continue_template = \"Keep going:\\n{remaining_todos}\"\n\
                  [plugin.grants]\nread_state = [\"misbehave\"]\n";
    let model = FakeModel::start().await;
    let plugins = format!("{}{}", plugin_block("todo", config), plugin_block("misbehave", ""));
    let test = TestHost::with_plugins(&model, &plugins).await;
    let session = test.session();
    ok(&test, &session, "todos_add", json!({"todos": [{"title": "open"}]})).await;

    model.push(Reply::text("no mode yet"));
    test.turn(&session, "hello").await.unwrap();
    assert_eq!(model.requests().len(), 1, "no loop while no mode is set");

    session.lock().await.bag().put("misbehave", "mode", Some("\"plan\"".into()));
    model.push(Reply::text("planned"));
    test.turn(&session, "plan it").await.unwrap();
    assert_eq!(model.requests().len(), 2, "no loop in plan mode");

    session.lock().await.bag().put("misbehave", "mode", Some("\"execute\"".into()));
    model.push(Reply::text("executed?"));
    model.push(Reply::tool("todos_remove", r#"{"ids":[1]}"#));
    model.push(Reply::text("executed"));
    test.turn(&session, "do it").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 5, "one continue in execute mode");
    assert_eq!(last_user_message(&requests[3]), "Keep going:\n- 1 [open] open");
}

#[tokio::test]
async fn loop_modes_without_mode_plugin_is_refused() {
    let model = FakeModel::start().await;
    let config =
        config_text(&model.url(), &plugin_block("todo", "[plugin.config.loop]\nmodes = [\"execute\"]\n"));
    let error = TestHost::new(&config).await.err().expect("the load fails").to_string();
    assert!(error.contains("loop.modes") && error.contains("loop.mode_plugin"), "{error}");
}

#[tokio::test]
async fn concurrent_adds_on_one_session_get_unique_ids() {
    let test = std::sync::Arc::new(host("").await);
    let session = test.session();
    let tasks: Vec<_> = (0..6)
        .map(|n| {
            let (test, session) = (test.clone(), session.clone());
            tokio::spawn(async move {
                ok(&test, &session, "todos_add", json!({"todos": [{"title": format!("task {n}")}]})).await
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let items = stored_items(&session).await;
    let mut ids: Vec<u64> = items.as_array().unwrap().iter().map(|i| i["id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![1, 2, 3, 4, 5, 6]);
}
