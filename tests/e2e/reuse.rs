//! `provide` reuse (`reuse.until-state-changes`, contract 0.1.1): what a plugin declared
//! reusable is served from the session's memo while the state it read is unchanged, and
//! recomputed the moment that state changes; another session holding the same values gets it
//! too; a tool call that changed that state leaves the next one asked ahead in its own
//! instance; a plugin built against 0.1.0 still loads and is simply called every time; a
//! `stop` decided from state (contract 0.2.11) is kept the same way.

use agent_host::plugins::{Export, LoadedPlugin};
use serde_json::Value;

use crate::support::{FakeModel, Reply, TestHost, paragraphs, plugin_block, system_prompt};

/// The stock trio whose `provide` declares itself reusable.
async fn stock_host(model: &FakeModel) -> TestHost {
    let plugins = format!(
        "{}{}{}",
        plugin_block("todo", ""),
        plugin_block("agent-mode", ""),
        plugin_block(
            "permissions",
            "[plugin.config]\nrules = [{ tool = \"todos_*\", decision = \"allow\" }]"
        ),
    );
    TestHost::with_plugins(model, &plugins).await
}

fn plugin(test: &TestHost, name: &str) -> std::sync::Arc<LoadedPlugin> {
    test.host.plugins().plugins().iter().find(|p| p.name() == name).expect("loaded").clone()
}

/// The content of every message in one request.
fn contents(request: &Value) -> Vec<&str> {
    request["messages"].as_array().unwrap().iter().filter_map(|m| m["content"].as_str()).collect()
}

/// The todo list message injected into one request.
fn injected_list(request: &Value) -> &str {
    paragraphs(request)
        .into_iter()
        .rfind(|c| c.starts_with("### Current todo list"))
        .unwrap_or_else(|| panic!("no todo list in {request}"))
}

#[tokio::test]
async fn contributions_are_reused_until_the_state_they_read_changes() {
    let model = FakeModel::start().await;
    model.push(Reply::text("hello"));
    model.push(Reply::text("still here"));
    model.push(Reply::tool("todos_add", r#"{"todos": [{"title": "write the report"}]}"#));
    model.push(Reply::tool("todos_complete", r#"{"items": [{"id": 1, "reason": "written"}]}"#));
    model.push(Reply::text("done"));
    let test = stock_host(&model).await;
    let session = test.session();
    let reused = || async { session.lock().await.provide_memo().reused() };

    // The first call: all three come from what they returned for the load's tool-name check
    // (an empty session but for what `configure` seeded, like this one: agent-mode's default
    // mode, so its `provide` has nothing to write and is kept).
    test.turn(&session, "hi").await.unwrap();
    assert_eq!(reused().await, 3);
    // Nothing changed since: all three come from the memo.
    test.turn(&session, "again").await.unwrap();
    assert_eq!(reused().await, 3 + 3);

    // A turn that changes the todo list: three model calls. Before the first, nothing
    // changed (3 reused). `todos_add` and `todos_complete` each change the list, and todo's
    // next contribution is asked ahead in the tool call's own instance, so the model calls
    // after them find it kept with agent-mode's and permissions' (3 each).
    let todo = plugin(&test, "todo");
    let counted = || {
        let calls = todo.calls();
        (calls.instances(), calls.get(Export::Provide), calls.get(Export::CallTool), calls.get(Export::Stop))
    };
    let before = counted();
    test.turn(&session, "work").await.unwrap();
    assert_eq!(reused().await, 6 + 3 + 3 + 3);
    let after = counted();
    assert_eq!(after.1 - before.1, 2, "a contribution asked ahead after each tool call");
    assert_eq!(
        after.0 - before.0,
        (after.2 - before.2) + (after.3 - before.3),
        "an instance for each tool call and `stop`, none for `provide`: {}",
        todo.calls().summary()
    );

    // The model saw the list as it was at every call, never a stale copy.
    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    assert!(injected_list(&requests[2]).ends_with("- none yet"), "{}", injected_list(&requests[2]));
    assert!(
        injected_list(&requests[3]).ends_with("- 1 [open] write the report"),
        "{}",
        injected_list(&requests[3])
    );
    assert!(
        injected_list(&requests[4]).ends_with("- 1 [done] write the report"),
        "{}",
        injected_list(&requests[4])
    );
    // And every plugin's instructions were there each time, reused or not.
    let first = system_prompt(&requests[0]);
    assert!(requests.iter().all(|r| system_prompt(r) == first), "the system prompt never changed here");
}

#[tokio::test]
async fn a_contribution_asked_ahead_with_an_effect_is_neither_kept_nor_committed() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("viewer_add", r#"{"title": "one"}"#));
    model.push(Reply::text("added"));
    let test =
        TestHost::with_plugins(&model, &plugin_block("viewer", "[plugin.config]\nprovide_counts = true"))
            .await;
    let session = test.session();
    let viewer = plugin(&test, "viewer");
    let provided_before = viewer.calls().get(Export::Provide);
    test.turn(&session, "add one").await.unwrap();
    // The first model call takes the empty list's contribution the load kept. `viewer_add`
    // moves the list, so the next one is asked ahead in its instance: the list no longer
    // empty, that call bumps `provided`, so it is neither kept nor committed, and the
    // second model call calls `provide` again, whose bump is committed.
    assert_eq!(viewer.calls().get(Export::Provide) - provided_before, 2, "{}", viewer.calls().summary());
    assert_eq!(session.lock().await.bag().get_json("viewer", "provided"), Some(serde_json::json!(1)));
    let requests = model.requests();
    assert!(
        system_prompt(&requests[0]).contains("The list has 0 entries."),
        "{}",
        system_prompt(&requests[0])
    );
    assert!(
        system_prompt(&requests[1]).contains("The list has 1 entries."),
        "{}",
        system_prompt(&requests[1])
    );
}

#[tokio::test]
async fn a_stop_with_an_effect_is_committed_and_never_kept() {
    let model = FakeModel::start().await;
    model.push(Reply::text("hello"));
    model.push(Reply::text("hello again"));
    model.push(Reply::tool("viewer_add", r#"{"title": "one"}"#));
    model.push(Reply::text("added"));
    model.push(Reply::text("still one"));
    let test =
        TestHost::with_plugins(&model, &plugin_block("viewer", "[plugin.config]\nstop_counts = true")).await;
    let session = test.session();
    let viewer = plugin(&test, "viewer");
    let stops = || viewer.calls().get(Export::Stop);
    test.turn(&session, "hi").await.unwrap();
    test.turn(&session, "and again").await.unwrap();
    assert_eq!(stops(), 1, "the empty list's end, kept: {}", viewer.calls().summary());
    // With an entry, `stop` bumps `stopped`: committed each time, and so asked each time.
    test.turn(&session, "add one").await.unwrap();
    test.turn(&session, "and again").await.unwrap();
    assert_eq!(stops(), 3, "{}", viewer.calls().summary());
    assert_eq!(session.lock().await.bag().get_json("viewer", "stopped"), Some(serde_json::json!(2)));
    assert_eq!(session.lock().await.stop_memo().reused(), 1, "only the empty list's end was kept");
}

#[tokio::test]
async fn a_new_session_starts_from_what_another_kept_but_never_sees_its_state() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("todos_add", r#"{"todos": [{"title": "only in the first session"}]}"#));
    model.push(Reply::tool("todos_complete", r#"{"items": [{"id": 1, "reason": "done"}]}"#));
    model.push(Reply::text("done"));
    model.push(Reply::text("first again"));
    model.push(Reply::text("hello"));
    model.push(Reply::text("hello again"));
    let test = stock_host(&model).await;
    let (first, second) = (test.session(), test.session());
    test.turn(&first, "plan it").await.unwrap();
    test.turn(&first, "again").await.unwrap();
    test.turn(&second, "hi").await.unwrap();
    test.turn(&second, "again").await.unwrap();

    let requests = model.requests();
    assert!(injected_list(&requests[3]).ends_with("- 1 [done] only in the first session"));
    // The second session's list is its own, empty one, never the first session's.
    for request in &requests[4..] {
        assert!(injected_list(request).ends_with("- none yet"), "{}", injected_list(request));
    }
    // Its calls took the contributions already kept for the same values (an empty list, no
    // mode chosen, the default mode seeded): all three, both times.
    assert_eq!(second.lock().await.provide_memo().reused(), 3 + 3);
    let prompt = system_prompt(&requests[0]);
    assert!(requests.iter().all(|r| system_prompt(r) == prompt), "the same config and mode, the same prompt");
}

#[tokio::test]
async fn an_outside_change_to_state_a_contribution_read_is_seen_on_the_next_call() {
    let model = FakeModel::start().await;
    let test = stock_host(&model).await;
    let session = test.session();
    test.system_prompt_of_a_turn(&model, &session, "one").await;
    let before = test.system_prompt_of_a_turn(&model, &session, "two").await;
    assert!(before.contains("preset: ask-to-mutate"), "{before}");

    // `/permissions read-only` writes the session preset that permissions' `provide` reads.
    {
        let mut locked = session.lock().await;
        test.host.command(&mut locked, "/permissions read-only", &*test.events).await.unwrap();
    }
    let after = test.system_prompt_of_a_turn(&model, &session, "three").await;
    assert!(after.contains("preset: read-only"), "the reused contribution was dropped: {after}");
}

#[tokio::test]
async fn a_plugin_built_against_contract_0_1_0_loads_and_is_called_every_time() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("legacy_count", "{}"));
    model.push(Reply::text("counted"));
    model.push(Reply::text("hello"));
    let test = TestHost::with_plugins(&model, &plugin_block("contract-0-1-0", "")).await;
    let session = test.session();
    test.turn(&session, "count").await.unwrap();
    test.turn(&session, "and now?").await.unwrap();

    let requests = model.requests();
    assert!(
        system_prompt(&requests[0]).contains("legacy_count was called 0 times"),
        "{}",
        system_prompt(&requests[0])
    );
    assert!(contents(&requests[1]).contains(&"call number 1"), "its tool ran: {:?}", contents(&requests[1]));
    assert!(system_prompt(&requests[1]).contains("legacy_count was called 1 times"));
    assert!(system_prompt(&requests[2]).contains("legacy_count was called 1 times"));
    assert_eq!(requests[0]["tools"][0]["function"]["name"], "legacy_count");
    assert_eq!(session.lock().await.provide_memo().reused(), 0, "it never declared reuse");
}

#[tokio::test]
async fn what_configure_seeds_every_new_session_starts_with_so_its_provide_is_not_called() {
    // Contract 0.2.10: agent-mode seeds its default mode from `configure`, so a new session
    // holds it before any call, and agent-mode's `provide` has nothing to write: every new
    // session's first model call takes the contribution the load kept, with no instance.
    let model = FakeModel::start().await;
    let config = "[plugin.config]\ndefault_mode = \"plan\"";
    let test = TestHost::with_plugins(&model, &plugin_block("agent-mode", config)).await;
    let agent_mode = plugin(&test, "agent-mode");
    let provided = || agent_mode.calls().get(Export::Provide);
    let before = provided();
    for turn in 1..=3 {
        let session = test.session();
        let seeded = session.lock().await.bag().get_json("agent-mode", "default_mode");
        assert_eq!(seeded, Some(serde_json::json!("plan")), "session {turn}, before any call");
        model.push(Reply::text("hello"));
        test.turn(&session, "hi").await.unwrap();
        assert_eq!(provided(), before, "session {turn}: {}", agent_mode.calls().summary());
        assert!(system_prompt(&model.requests()[turn - 1]).contains("The current mode is `plan`."));
    }

    // A reload that changes the default: a session made before keeps its seed until agent-mode
    // writes the new default on its next model call; a session made after starts with it.
    let earlier = test.session();
    let path = test.dir.path().join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("default_mode = \"plan\"", "default_mode = \"execute\"")).unwrap();
    test.host.command(&mut *earlier.lock().await, "/reload", &*test.events).await.unwrap();
    let reloaded = plugin(&test, "agent-mode");
    assert!(!std::sync::Arc::ptr_eq(&reloaded, &agent_mode), "the plugin was configured anew");
    let default = async |session: &agent_host::agent::SessionHandle| {
        session.lock().await.bag().get_json("agent-mode", "default_mode")
    };
    assert_eq!(default(&earlier).await, Some(serde_json::json!("plan")), "made before the reload");
    let later = test.session();
    assert_eq!(default(&later).await, Some(serde_json::json!("execute")), "made after it");
    model.push(Reply::text("hello"));
    test.turn(&earlier, "hi").await.unwrap();
    assert_eq!(default(&earlier).await, Some(serde_json::json!("execute")), "written on its next call");
}

#[tokio::test]
async fn a_stop_decided_from_state_ends_other_turns_without_a_call_while_that_state_holds() {
    // Contract 0.2.11: todo's `stop` decides from its list (and the mode) alone, so what it
    // said is kept with the values it read: a turn that ends where they hold, in this session
    // or another, instantiates nothing.
    let model = FakeModel::start().await;
    let test = stock_host(&model).await;
    let todo = plugin(&test, "todo");
    let (stops, instances) = (|| todo.calls().get(Export::Stop), || todo.calls().instances());
    let first = test.session();
    model.push(Reply::text("hello"));
    test.turn(&first, "hi").await.unwrap();
    assert_eq!(stops(), 1, "the first turn's end asks: {}", todo.calls().summary());

    // Another session, its list as empty: the kept "stop" ends its turn, no instance.
    let second = test.session();
    let before = instances();
    model.push(Reply::text("hello again"));
    test.turn(&second, "hi").await.unwrap();
    assert_eq!((stops(), instances()), (1, before), "{}", todo.calls().summary());

    // The list moves: each turn end after a change asks again; an open item sends the model
    // back.
    model.push(Reply::tool("todos_add", r#"{"todos": [{"title": "write the report"}]}"#));
    model.push(Reply::text("later"));
    model.push(Reply::tool("todos_complete", r#"{"items": [{"id": 1, "reason": "written"}]}"#));
    model.push(Reply::text("done"));
    test.turn(&second, "work").await.unwrap();
    assert_eq!(stops(), 3, "asked after each change: {}", todo.calls().summary());
    let requests = model.requests();
    let sent_back = contents(&requests[4]).into_iter().rfind(|text| text.contains("write the report"));
    assert!(sent_back.is_some(), "the open item sent the model back: {:?}", contents(&requests[4]));

    // Nothing moved since: this session's next turn, and a third session's (an empty list,
    // as the first kept), end without asking.
    let before = instances();
    model.push(Reply::text("anything else?"));
    test.turn(&second, "thanks").await.unwrap();
    let third = test.session();
    model.push(Reply::text("hi"));
    test.turn(&third, "hi").await.unwrap();
    assert_eq!((stops(), instances()), (3, before), "{}", todo.calls().summary());
    assert_eq!(second.lock().await.stop_memo().reused(), 2, "its first turn's end and its last");
}
