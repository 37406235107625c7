//! Views (contract 0.2.4): what the `viewer` test plugin shows reaches the event stream whole
//! on `view_changed` when a session opens (new or resumed), after a call that changed what it
//! shows, and after a reload that changed the plugin; never per model call, and a `view` is
//! not even asked while the plugin's state stands still. A failing view shows its error and
//! fails nothing else. The console draws the widgets without knowing the plugin.

use agent_host::Event;
use agent_host::events::PluginView;
use agent_host::plugins::Export;
use serde_json::{Value, json};

use crate::event_schema::validated_lines;
use crate::support::{
    FakeModel, Reply, TestHost, config_text, console_on, json_prompt_command, plugin_block,
};

/// The viewer's widgets with `entries` in its checklist (labelled `heading`), nothing picked.
fn widgets(heading: &str, entries: Value, count: &str) -> Value {
    json!([
        {"widget": "checklist", "id": "entries", "label": heading, "entries": entries},
        {"widget": "choice", "id": "pick", "label": "Pick",
         "options": [{"value": "alpha", "label": "alpha"}, {"value": "beta", "label": "beta"}],
         "command": "/pick"},
        {"widget": "text", "id": "count", "label": "Count", "markdown": count}
    ])
}

/// How many times `plugin`'s `view` export was called, in the plugin set loaded now.
fn view_calls(test: &TestHost, plugin: &str) -> u64 {
    test.host.plugins().by_name(plugin).expect("loaded").calls().get(Export::View)
}

/// The views `events` sent, in order.
fn views(events: &[Event]) -> Vec<PluginView> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ViewChanged { view } => Some(view.clone()),
            _ => None,
        })
        .collect()
}

/// A `--json --prompt` run of the real binary on the deployment in `dir`, every line checked
/// against the committed event schema.
async fn json_run(dir: &std::path::Path, session: Option<&str>, prompt: &str) -> Vec<Value> {
    let output = json_prompt_command(dir, session, prompt)
        .env("AGENT_HOST_TEST_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("the binary runs");
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    validated_lines(&String::from_utf8_lossy(&output.stdout))
}

fn deployment(model: &FakeModel, plugins: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), plugins)).unwrap();
    dir
}

/// The position of the first event of `kind` after `from` for which `matches` holds.
fn position(events: &[Value], from: usize, kind: &str, matches: impl Fn(&Value) -> bool) -> usize {
    from + events[from..]
        .iter()
        .position(|event| event["type"] == kind && matches(event))
        .unwrap_or_else(|| panic!("no {kind} after event {from}: {events:#?}"))
}

#[tokio::test]
async fn the_json_stream_sends_the_whole_view_at_start_and_after_a_change_only() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("viewer_add", r#"{"title":"write tests"}"#).and_tool("viewer_peek", "{}"));
    model.push(Reply::tool("viewer_peek", "{}"));
    model.push(Reply::text("done"));
    let dir = deployment(&model, &plugin_block("viewer", ""));

    let events = json_run(dir.path(), None, "plan").await;
    let changed: Vec<usize> =
        (0..events.len()).filter(|&index| events[index]["type"] == "view_changed").collect();
    // Not after either viewer_peek, nor after any of the three model calls.
    assert_eq!(changed.len(), 2, "at start and after viewer_add only: {events:#?}");

    let (opened, prompt) =
        (position(&events, 0, "session_started", |_| true), position(&events, 0, "user_message", |_| true));
    assert!(opened < changed[0] && changed[0] < prompt, "the view comes with the session: {events:#?}");
    assert_eq!(events[changed[0]]["plugin"], "viewer");
    assert_eq!(events[changed[0]]["widgets"], widgets("Plan", json!([]), "0 entries"));
    assert!(events[changed[0]].get("error").is_none(), "{}", events[changed[0]]);

    // Right after the call that changed it, before the next call of the same reply.
    let added = position(&events, 0, "tool_result", |e| e["name"] == "viewer_add");
    let peek = position(&events, added, "tool_call", |e| e["name"] == "viewer_peek");
    assert!(added < changed[1] && changed[1] < peek, "{events:#?}");
    let entry = json!([{"title": "write tests", "state": "in_progress", "active_form": "Doing write tests"}]);
    assert_eq!(events[changed[1]]["widgets"], widgets("Plan", entry, "1 entries"));
}

#[tokio::test]
async fn a_view_is_asked_only_when_its_state_moved_never_per_model_call() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("viewer", "")).await;
    let session = test.session();
    test.host.refresh_views(&mut *session.lock().await, &*test.events).await;
    assert_eq!(view_calls(&test, "viewer"), 1, "asked once as the session opens");
    assert_eq!(views(&test.take_events()).len(), 1);

    // Four model calls and three tool calls that write nothing: not one more `view` call.
    for _ in 0..3 {
        model.push(Reply::tool("viewer_peek", "{}"));
    }
    model.push(Reply::text("nothing to do"));
    test.turn(&session, "look").await.unwrap();
    assert_eq!(model.requests().len(), 4);
    assert_eq!(view_calls(&test, "viewer"), 1, "no state moved, so no view was asked");
    assert!(views(&test.take_events()).is_empty());
    test.host.refresh_views(&mut *session.lock().await, &*test.events).await;
    assert_eq!(view_calls(&test, "viewer"), 1, "a refresh with nothing stale calls no plugin");

    // A write the view does not show: asked again, but the same view is not sent again.
    model.push(Reply::tool("viewer_tally", "{}"));
    model.push(Reply::text("tallied"));
    test.turn(&session, "tally").await.unwrap();
    assert_eq!(view_calls(&test, "viewer"), 2);
    assert!(views(&test.take_events()).is_empty(), "the view did not change");

    // An operator command that moves the choice: asked, and sent.
    let mut locked = session.lock().await;
    test.host.command(&mut locked, "/pick beta", &*test.events).await.unwrap();
    assert_eq!(view_calls(&test, "viewer"), 3);
    let sent = views(&test.take_events());
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(serde_json::to_value(&sent[0].widgets).unwrap()[1]["current"], "beta");
}

/// The viewer's calls since load, summed over its exports, and the instances they ran in.
fn calls_and_instances(test: &TestHost) -> (u64, u64) {
    let plugins = test.host.plugins();
    let calls = plugins.by_name("viewer").expect("loaded").calls();
    (Export::ALL.into_iter().map(|export| calls.get(export)).sum(), calls.instances())
}

#[tokio::test]
async fn a_view_asked_after_a_tool_moved_its_state_runs_in_the_tools_instance_and_shows_its_writes() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("viewer", "")).await;
    let session = test.session();
    test.host.refresh_views(&mut *session.lock().await, &*test.events).await;
    test.take_events();
    let (calls_before, instances_before) = calls_and_instances(&test);
    let views_before = view_calls(&test, "viewer");

    model.push(Reply::tool("viewer_add", r#"{"title":"write tests"}"#));
    model.push(Reply::text("added"));
    test.turn(&session, "add one").await.unwrap();

    assert_eq!(view_calls(&test, "viewer") - views_before, 1, "asked once, after the add");
    let (calls, instances) = calls_and_instances(&test);
    assert_eq!(
        instances - instances_before,
        calls - calls_before - 2,
        "every call made its own instance but the next contribution and the view, asked in the add's"
    );
    let events = test.take_events();
    let sent = views(&events);
    assert_eq!(sent.len(), 1, "{events:#?}");
    let shown = serde_json::to_value(&sent[0].widgets).unwrap();
    let entry = json!([{"title": "write tests", "state": "in_progress", "active_form": "Doing write tests"}]);
    assert_eq!(shown[0]["entries"], entry, "{shown}");
    // Sent with the tool's result, before the model reads it.
    let changed = events.iter().position(|e| matches!(e, Event::ViewChanged { .. })).unwrap();
    let result = events.iter().position(|e| matches!(e, Event::ToolResult { .. })).unwrap();
    let second_request = events.iter().rposition(|e| matches!(e, Event::ModelRequest { .. })).unwrap();
    assert!(result < changed && changed < second_request, "{events:#?}");
}

#[tokio::test]
async fn a_view_that_fails_in_the_tools_instance_fails_the_view_alone() {
    let model = FakeModel::start().await;
    let test =
        TestHost::with_plugins(&model, &plugin_block("viewer", "[plugin.config]\nfail_view = true\n")).await;
    let session = test.session();
    test.host.refresh_views(&mut *session.lock().await, &*test.events).await;
    test.take_events();
    let views_before = view_calls(&test, "viewer");

    model.push(Reply::tool("viewer_add", r#"{"title":"write tests"}"#));
    model.push(Reply::text("added"));
    test.turn(&session, "add one").await.unwrap();
    let events = test.take_events();
    let result = events.iter().find_map(|event| match event {
        Event::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
        _ => None,
    });
    assert_eq!(result, Some((true, "1 entries".to_owned())), "{events:#?}");
    assert_eq!(view_calls(&test, "viewer") - views_before, 1, "asked in the add's instance");
    let locked = session.lock().await;
    assert_eq!(locked.bag().get("viewer", "entries").as_deref(), Some(r#"["write tests"]"#));
    let shown = locked.views().of("viewer").expect("the view's error is shown");
    assert!(shown.widgets.is_empty());
    assert!(shown.error.as_deref().unwrap_or_default().contains("fail_view is set"), "{shown:?}");
}

#[tokio::test]
async fn what_a_session_start_hook_changed_is_shown_before_the_first_model_call() {
    let model = FakeModel::start().await;
    model.push(Reply::text("ok"));
    let dir = deployment(&model, &plugin_block("viewer", "[plugin.config]\nnote_start = true\n"));

    let events = json_run(dir.path(), None, "hello").await;
    let opened = position(&events, 0, "view_changed", |_| true);
    assert_eq!(events[opened]["widgets"].as_array().unwrap().len(), 3, "before the hook: {events:#?}");
    let started = position(&events, opened + 1, "view_changed", |_| true);
    let request = position(&events, 0, "model_request", |_| true);
    assert!(started < request, "{events:#?}");
    assert_eq!(
        events[started]["widgets"][3],
        json!({"widget": "text", "id": "started", "label": "Started", "markdown": "Session started"})
    );
}

#[tokio::test]
async fn what_a_prompt_hook_changed_is_shown_before_the_first_model_call() {
    let model = FakeModel::start().await;
    model.push(Reply::text("ok"));
    let test =
        TestHost::with_plugins(&model, &plugin_block("viewer", "[plugin.config]\nnote_prompt = true\n"))
            .await;
    let session = test.session();
    test.host.refresh_views(&mut *session.lock().await, &*test.events).await;
    test.take_events();

    test.turn(&session, "hello there").await.unwrap();
    let events = test.take_events();
    let changed = events.iter().position(|e| matches!(e, Event::ViewChanged { .. })).expect("a view_changed");
    let request = events.iter().position(|e| matches!(e, Event::ModelRequest { .. })).unwrap();
    assert!(changed < request, "{events:#?}");
    let Event::ViewChanged { view } = &events[changed] else { unreachable!() };
    assert_eq!(
        serde_json::to_value(&view.widgets).unwrap()[3],
        json!({"widget": "text", "id": "prompt", "label": "Last prompt", "markdown": "hello there"})
    );
    assert_eq!(views(&events).len(), 1, "{events:#?}");
}

#[tokio::test]
async fn a_failing_view_shows_its_error_and_fails_nothing_else() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("viewer_add", r#"{"title":"one"}"#));
    model.push(Reply::tool("twin_add", r#"{"title":"two"}"#));
    model.push(Reply::text("done"));
    let plugins = format!(
        "{}{}",
        plugin_block("viewer", "[plugin.config]\nfail_view = true\n"),
        plugin_block("viewer-twin", "")
    );
    let dir = deployment(&model, &plugins);

    let events = json_run(dir.path(), None, "go").await;
    let of = |plugin: &str| -> Vec<&Value> {
        events.iter().filter(|e| e["type"] == "view_changed" && e["plugin"] == plugin).collect()
    };
    let failed = of("viewer");
    assert_eq!(failed.len(), 1, "the same failure is not sent again: {failed:#?}");
    assert_eq!(failed[0]["widgets"], json!([]));
    let error = failed[0]["error"].as_str().expect("the error in place of the widgets");
    assert!(error.contains("viewer@0.1.0") && error.contains("fail_view is set"), "{error}");

    let twin = of("viewer-twin");
    assert_eq!(twin.len(), 2, "at start and after twin_add: {twin:#?}");
    assert_eq!(twin[1]["widgets"][0]["entries"][0]["title"], "two");
    assert!(twin.iter().all(|view| view.get("error").is_none()));

    let ended = events.iter().find(|e| e["type"] == "turn_ended").expect("the turn ends");
    assert_eq!(ended["reason"], "done", "{ended}");
    let added = events.iter().find(|e| e["type"] == "tool_result" && e["name"] == "viewer_add").unwrap();
    assert_eq!(added["ok"], true, "the failing plugin's tool still works: {added}");
}

#[tokio::test]
async fn after_a_reload_that_changes_the_plugin_its_view_is_asked_again() {
    let model = FakeModel::start().await;
    let test =
        TestHost::with_plugins(&model, &plugin_block("viewer", "[plugin.config]\nheading = \"Plan\"\n"))
            .await;
    let session = test.session();
    let mut locked = session.lock().await;
    test.host.refresh_views(&mut locked, &*test.events).await;
    test.take_events();

    // Nothing changed: the plugin is reused, and its view is not asked.
    test.host.command(&mut locked, "/reload", &*test.events).await.unwrap();
    assert_eq!(view_calls(&test, "viewer"), 1);
    assert!(views(&test.take_events()).is_empty());

    // A new config: a new load, asked at once on the command's own path (an idle console
    // session shows it right after `/reload`).
    let path = test.dir.path().join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("heading = \"Plan\"", "heading = \"Steps\"")).unwrap();
    test.host.command(&mut locked, "/reload", &*test.events).await.unwrap();
    assert_eq!(view_calls(&test, "viewer"), 1, "the new load's first call");
    let sent = views(&test.take_events());
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(serde_json::to_value(&sent[0].widgets).unwrap(), widgets("Steps", json!([]), "0 entries"));

    // A plugin no longer loaded shows nothing: its view is sent empty, once.
    std::fs::write(&path, config_text(&model.url(), &plugin_block("viewer-twin", ""))).unwrap();
    test.host.command(&mut locked, "/reload", &*test.events).await.unwrap();
    let sent = views(&test.take_events());
    let gone = sent.iter().find(|view| view.plugin == "viewer").expect("the viewer's view is cleared");
    assert!(gone.widgets.is_empty() && gone.error.is_none(), "{gone:?}");
    assert!(sent.iter().any(|view| view.plugin == "viewer-twin" && !view.widgets.is_empty()), "{sent:?}");
    assert_eq!(
        locked.views().current().iter().map(|v| v.plugin.as_str()).collect::<Vec<_>>(),
        ["viewer-twin"]
    );
}

#[tokio::test]
async fn a_resumed_session_gets_its_views_again_as_it_opens() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("viewer_add", r#"{"title":"carry on"}"#));
    model.push(Reply::text("added"));
    let dir = deployment(&model, &plugin_block("viewer", ""));
    let first = json_run(dir.path(), None, "add").await;
    let id = first.iter().find(|e| e["type"] == "session_started").unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    model.push(Reply::text("still here"));
    let resumed = json_run(dir.path(), Some(&id), "again").await;
    let changed: Vec<&Value> = resumed.iter().filter(|e| e["type"] == "view_changed").collect();
    assert_eq!(changed.len(), 1, "sent as the session opens, and nothing changed after: {resumed:#?}");
    let entry = json!([{"title": "carry on", "state": "in_progress", "active_form": "Doing carry on"}]);
    assert_eq!(changed[0]["widgets"], widgets("Plan", entry, "1 entries"));
    let prompt = resumed.iter().position(|e| e["type"] == "user_message").unwrap();
    let view = resumed.iter().position(|e| e["type"] == "view_changed").unwrap();
    assert!(view < prompt, "before the turn: {resumed:#?}");
}

#[tokio::test]
async fn the_console_draws_a_checklist_and_a_choice_for_any_plugin() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("viewer_add", r#"{"title":"first"}"#));
    model.push(Reply::tool("viewer_add", r#"{"title":"second"}"#));
    model.push(Reply::text("two added"));
    let dir = deployment(&model, &plugin_block("viewer", ""));
    let stdout = console_on(&dir.path().join("config.toml"), None, "add two\n/pick beta\n").await;
    let lines: Vec<&str> = stdout.lines().map(str::trim_end).collect();
    for expected in [
        "Plan: nothing yet",
        "Pick: (none)  (/pick alpha|beta)",
        "Count: 0 entries",
        "  ◐ Doing first",
        "  ✓ first",
        "  ◐ Doing second",
        "Count: 2 entries",
        "Pick: beta  (/pick alpha|beta)",
    ] {
        assert!(lines.iter().any(|line| line.ends_with(expected)), "no line `{expected}` in:\n{stdout}");
    }
    let picked = lines.iter().position(|line| line.ends_with("Pick: beta  (/pick alpha|beta)")).unwrap();
    let second = lines.iter().position(|line| line.ends_with("  ◐ Doing second")).unwrap();
    assert!(second < picked, "drawn as they changed:\n{stdout}");
}

#[tokio::test]
async fn a_reload_shows_a_served_idle_session_the_view_it_changed_at_once() {
    let model = FakeModel::start().await;
    let config = |heading: &str| format!("[plugin.config]\nheading = \"{heading}\"\n");
    let server = crate::support::serve::serve(&model, &plugin_block("viewer", &config("First")), "").await;
    let session = server.new_session("alice").await;
    let (_, detail) = server.get("alice", &format!("/v1/sessions/{session}")).await;
    assert_eq!(detail["views"][0]["widgets"][0]["label"], "First", "{detail}");
    let last = detail["last_event_id"].as_str().expect("the views' event").to_owned();

    let file = server.dir.path().join("config.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace(&config("First"), &config("Second"))).unwrap();
    let (status, body) = server.post("root", "/v1/reload", json!({})).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");

    // No turn, no request to the session: its stream hears of the reload by itself.
    let events =
        server.events_after("alice", &session, Some(&last), |event| event["type"] == "view_changed").await;
    let (_, changed) = events.last().unwrap();
    assert_eq!(changed["plugin"], "viewer");
    assert_eq!(changed["widgets"][0]["label"], "Second", "{changed}");
}

/// `todo` with a list template of its own (the reload below changes it) and no completion
/// loop (the turn ends on the model's answer with the item still open).
const TODO_CONFIG: &str =
    "[plugin.config]\nitem_template = \"- {title}\"\n[plugin.config.loop]\nenabled = false";

#[tokio::test]
async fn a_view_read_only_from_state_is_shown_to_every_new_session_from_one_call() {
    // The stock `todo` declares its view reusable (contract 0.2.9): a new session's empty list
    // is shown from the one call the first session made, and asked again only for state no
    // session's view was read from.
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("todo", TODO_CONFIG)).await;
    let empty = json!([{"widget": "checklist", "id": "todos", "label": "Todos", "entries": []}]);
    for session in 1..=3 {
        let opened = test.session();
        test.host.refresh_views(&mut *opened.lock().await, &*test.events).await;
        assert_eq!(view_calls(&test, "todo"), 1, "session {session} opened on the first one's call");
        let sent = views(&test.take_events());
        assert_eq!(sent.len(), 1, "session {session}: {sent:?}");
        assert_eq!(serde_json::to_value(&sent[0].widgets).unwrap(), empty, "session {session}");
    }

    let session = test.session();
    test.host.refresh_views(&mut *session.lock().await, &*test.events).await;
    model.push(Reply::tool("todos_add", r#"{"todos":[{"title":"write tests"}]}"#));
    model.push(Reply::text("added"));
    test.turn(&session, "add one").await.unwrap();
    assert_eq!(view_calls(&test, "todo"), 2, "a list no view was read from is asked");
    let sent = views(&test.take_events());
    let shown = serde_json::to_value(&sent.last().expect("the list changed").widgets).unwrap();
    assert_eq!(shown[0]["entries"][0]["title"], "write tests", "{shown}");

    // The plugin reloaded with another configuration: a new load keeps nothing of the old.
    let path = test.dir.path().join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("- {title}", "* {title}")).unwrap();
    let mut locked = session.lock().await;
    test.host.command(&mut locked, "/reload", &*test.events).await.unwrap();
    drop(locked);
    let before = view_calls(&test, "todo");
    let fresh = test.session();
    test.host.refresh_views(&mut *fresh.lock().await, &*test.events).await;
    assert_eq!(view_calls(&test, "todo"), before + 1, "the new load asks its own view");
}
