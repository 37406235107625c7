//! The `agent-mode` plugin through the real component: config validation, the rendered
//! instructions, `mode_get` / `mode_set`, `/mode` and its one-time notice, plan-mode denial
//! of mutating tools, the `mode-changed` event and the fallback on a shrunk mode set. The
//! gate on leaving a read-only mode is in `leaving`.

use agent_host::Event;
use agent_host::agent::SessionHandle;
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, paragraphs, plugin_block, system_prompt};

mod leaving;

/// Two custom modes, `draft` (read-only, the default, the model may leave it) and `ship`.
const CUSTOM: &str = r#"
[plugin.config]
default_mode = "draft"
template = "MODES\n{available_modes}\nNOW={current_mode}"

[[plugin.config.modes]]
name = "draft"
description = "Sketch only."
allow_mutating = false
model_may_leave = true

[[plugin.config.modes]]
name = "ship"
description = "Build it."
"#;

/// The stock modes, except that the model may leave `plan` without asking.
const LEAVABLE_PLAN: &str = r#"
[[plugin.config.modes]]
name = "plan"
description = "Look only."
allow_mutating = false
model_may_leave = true

[[plugin.config.modes]]
name = "execute"
description = "Do it."
"#;

/// agent-mode (with `extra` config) beside misbehave, which offers `echo` and mutating `touch`.
async fn host_with(model: &FakeModel, extra: &str) -> TestHost {
    let plugins = format!("{}{}", plugin_block("agent-mode", extra), plugin_block("misbehave", ""));
    TestHost::with_plugins(model, &plugins).await
}

async fn call(test: &TestHost, session: &SessionHandle, tool: &str, args: Value) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.unwrap()
}

async fn command(test: &TestHost, session: &SessionHandle, line: &str) -> Result<String, String> {
    let mut session = session.lock().await;
    test.host.command(&mut session, line, &*test.events).await
}

/// How many messages across all requests contain `needle`.
fn occurrences(requests: &[Value], needle: &str) -> usize {
    requests
        .iter()
        .flat_map(|r| r["messages"].as_array().unwrap().iter())
        .filter(|m| m["content"].as_str().is_some_and(|c| c.contains(needle)))
        .count()
}

/// The `mode-changed` payloads among the collected events.
fn mode_changes(test: &TestHost) -> Vec<Value> {
    test.take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Plugin { kind, payload, .. } if kind == "mode-changed" => Some(payload.value()),
            _ => None,
        })
        .collect()
}

async fn load_error(extra: &str) -> String {
    let model = FakeModel::start().await;
    let config = config_text(&model.url(), &plugin_block("agent-mode", extra));
    match TestHost::new(&config).await {
        Ok(_) => panic!("the config was accepted:\n{extra}"),
        Err(error) => format!("{error:#}"),
    }
}

#[tokio::test]
async fn each_invalid_config_is_refused_with_a_clear_error() {
    let cases = [
        ("[plugin.config]\nmodes = []", "`modes` is empty"),
        ("[[plugin.config.modes]]\nname = \" \"\ndescription = \"d\"", "`modes[0].name` is blank"),
        ("[[plugin.config.modes]]\nname = \"a\"\ndescription = \"\"", "`modes[0].description` is blank"),
        (
            "[plugin.config]\ndefault_mode = \"a\"\n[[plugin.config.modes]]\nname = \"a\"\ndescription = \"d\"\n[[plugin.config.modes]]\nname = \"a\"\ndescription = \"e\"",
            "names `a` more than once",
        ),
        ("[plugin.config]\ndefault_mode = \"review\"", "`default_mode` is `review`"),
        ("[plugin.config]\ntemplate = \"modes: {available_modes}\"", "must contain `{current_mode}`"),
        ("[plugin.config]\ntemplate = \"now: {current_mode}\"", "must contain `{available_modes}`"),
    ];
    for (extra, expected) in cases {
        let error = load_error(extra).await;
        assert!(error.contains(expected), "expected `{expected}` in: {error}");
    }
}

#[tokio::test]
async fn the_default_template_lists_plan_and_execute_and_starts_in_plan() {
    let model = FakeModel::start().await;
    model.push(Reply::text("ok"));
    let test = host_with(&model, "").await;
    let session = test.session();
    test.turn(&session, "hi").await.unwrap();
    let prompt = system_prompt(&model.requests()[0]).to_owned();
    assert!(prompt.contains("#### plan\n\n") && prompt.contains("#### execute\n\n"), "{prompt}");
    assert!(prompt.contains("The current mode is `plan`"), "{prompt}");
    assert!(prompt.contains("mode_get") && prompt.contains("mode_set"), "{prompt}");
    assert_eq!(
        session.lock().await.bag().get_json("agent-mode", "mode"),
        None,
        "the default is not written down: `status` answers the badge"
    );
    let tools: Vec<String> = model.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(tools.contains(&"mode_get".into()) && tools.contains(&"mode_set".into()), "{tools:?}");
}

#[tokio::test]
async fn a_custom_template_renders_custom_modes_and_the_current_one() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("mode_set", r#"{"mode":"ship"}"#));
    model.push(Reply::text("done"));
    let test = host_with(&model, CUSTOM).await;
    let session = test.session();
    test.turn(&session, "go").await.unwrap();
    let requests = model.requests();
    let expected = "MODES\n#### draft\n\nSketch only.\n\n#### ship\n\nBuild it.\nNOW=draft";
    assert!(system_prompt(&requests[0]).contains(expected), "{}", system_prompt(&requests[0]));
    assert!(system_prompt(&requests[1]).contains("NOW=ship\n"), "the prompt follows the switch");
}

#[tokio::test]
async fn mode_get_and_mode_set_report_switch_and_refuse_unknown_names() {
    let test = host_with(&FakeModel::start().await, LEAVABLE_PLAN).await;
    let session = test.session();
    let got = call(&test, &session, "mode_get", json!({})).await;
    assert!(got.ok && got.output == "plan", "{got:?}");

    let set = call(&test, &session, "mode_set", json!({"mode": "execute"})).await;
    assert!(set.ok, "{set:?}");
    assert_eq!(set.output, "Mode is now execute.");
    assert!(!set.output.contains('\n'), "one short line");
    assert_eq!(call(&test, &session, "mode_get", json!({})).await.output, "execute");
    assert_eq!(session.lock().await.bag().get_json("agent-mode", "mode"), Some(json!("execute")));

    for wrong in ["Execute", "PLAN", "review"] {
        let refused = call(&test, &session, "mode_set", json!({"mode": wrong})).await;
        assert!(!refused.ok, "{wrong} was accepted");
        assert!(refused.output.contains(&format!("unknown mode `{wrong}`")), "{}", refused.output);
        assert!(refused.output.contains("`plan`, `execute`"), "{}", refused.output);
    }
    assert_eq!(call(&test, &session, "mode_get", json!({})).await.output, "execute", "unchanged");

    assert_eq!(mode_changes(&test), [json!({"from": "plan", "to": "execute", "by": "model"})]);
}

#[tokio::test]
async fn the_mode_command_shows_switches_and_is_case_sensitive() {
    let test = host_with(&FakeModel::start().await, "").await;
    let session = test.session();
    assert_eq!(command(&test, &session, "/mode").await.unwrap(), "mode: plan");
    let error = command(&test, &session, "/mode Execute").await.unwrap_err();
    assert!(error.contains("unknown mode `Execute`") && error.contains("`plan`, `execute`"), "{error}");
    assert_eq!(command(&test, &session, "/mode execute").await.unwrap(), "", "the view shows the switch");
    assert_eq!(command(&test, &session, "/mode").await.unwrap(), "mode: execute");
    assert_eq!(session.lock().await.bag().get_json("agent-mode", "mode"), Some(json!("execute")));
    assert_eq!(mode_changes(&test), [json!({"from": "plan", "to": "execute", "by": "operator"})]);
}

#[tokio::test]
async fn an_outside_switch_is_announced_once_on_the_next_model_call() {
    let model = FakeModel::start().await;
    // Turn 1: before any switch. Turn 2: two model calls after `/mode execute`.
    model.push(Reply::text("first"));
    model.push(Reply::tool("mode_get", "{}"));
    model.push(Reply::text("second"));
    model.push(Reply::text("third"));
    let test = host_with(&model, "").await;
    let session = test.session();
    test.turn(&session, "one").await.unwrap();
    command(&test, &session, "/mode execute").await.unwrap();
    test.turn(&session, "two").await.unwrap();
    test.turn(&session, "three").await.unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(occurrences(&requests, "[Mode changed:"), 1, "exactly one notice");
    let notice = paragraphs(&requests[1])
        .into_iter()
        .find(|c| c.starts_with("[Mode changed:"))
        .expect("the notice is on the first call after the switch");
    assert!(notice.contains("`plan`") && notice.contains("`execute`"), "{notice}");
    assert!(notice.contains("Follow the `execute` workflow from now on"), "{notice}");
    assert!(notice.ends_with(']'), "{notice}");
}

#[tokio::test]
async fn own_switches_and_same_mode_switches_announce_nothing() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("mode_set", r#"{"mode":"execute"}"#));
    model.push(Reply::text("switched"));
    model.push(Reply::text("still here"));
    model.push(Reply::text("and again"));
    let test = host_with(&model, LEAVABLE_PLAN).await;
    let session = test.session();
    test.turn(&session, "you may switch to execute").await.unwrap();
    assert_eq!(command(&test, &session, "/mode execute").await.unwrap(), "mode: already execute");
    test.turn(&session, "next").await.unwrap();
    // There and back before the model hears of it: nothing to announce.
    command(&test, &session, "/mode plan").await.unwrap();
    command(&test, &session, "/mode execute").await.unwrap();
    test.turn(&session, "last").await.unwrap();
    assert_eq!(occurrences(&model.requests(), "[Mode changed:"), 0);
}

#[tokio::test]
async fn plan_denies_mutating_tools_and_an_operator_switch_to_execute_allows_them() {
    let test = host_with(&FakeModel::start().await, "").await;
    let session = test.session();
    let denied = call(&test, &session, "touch", json!({})).await;
    assert!(!denied.ok, "{denied:?}");
    assert!(denied.output.contains("`touch`") && denied.output.contains("`plan`"), "{}", denied.output);
    assert!(denied.output.contains("read-only"), "the reason says what to do instead: {}", denied.output);

    let echoed = call(&test, &session, "echo", json!({"text": "hi"})).await;
    assert!(echoed.ok && echoed.output == "hi", "read-only tools pass in plan: {echoed:?}");
    assert!(call(&test, &session, "mode_get", json!({})).await.ok, "mode tools pass in plan");

    command(&test, &session, "/mode execute").await.unwrap();
    let touched = call(&test, &session, "touch", json!({})).await;
    assert!(touched.ok && touched.output == "touched", "{touched:?}");
}

#[tokio::test]
async fn a_custom_read_only_mode_is_enforced_too() {
    let test = host_with(&FakeModel::start().await, CUSTOM).await;
    let session = test.session();
    assert!(!call(&test, &session, "touch", json!({})).await.ok, "draft forbids mutating tools");
    command(&test, &session, "/mode ship").await.unwrap();
    assert!(call(&test, &session, "touch", json!({})).await.ok, "ship allows them");
}

#[tokio::test]
async fn a_mode_no_longer_configured_falls_back_to_the_default_once() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("mode_get", "{}"));
    model.push(Reply::text("ok"));
    model.push(Reply::text("ok again"));
    let test = host_with(&model, "").await;
    let session = test.session();
    // As if the session had been in a mode that a reconfiguration removed.
    session.lock().await.bag().put("agent-mode", "mode", Some("\"review\"".into()));
    test.turn(&session, "go").await.unwrap();
    test.turn(&session, "again").await.unwrap();

    let requests = model.requests();
    assert_eq!(occurrences(&requests, "[Mode changed:"), 1, "told once");
    assert_eq!(occurrences(&requests[..1], "no longer configured"), 1, "on the first call");
    assert!(system_prompt(&requests[0]).contains("The current mode is `plan`"));
    let tool_result =
        requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool_result["content"], "plan");
    assert_eq!(session.lock().await.bag().get_json("agent-mode", "mode"), Some(json!("plan")));
    assert_eq!(mode_changes(&test), [json!({"from": "review", "to": "plan", "by": "host"})]);
}

#[test]
fn the_console_prompt_shows_the_mode_and_each_switch_once() {
    let stdout = crate::support::scripted_console(
        "[[turn]]\ntext = \"\"\ntool_calls = [{ name = \"mode_set\", arguments = { mode = \"plan\" } }]\n\n[[turn]]\ntext = \"Back to planning.\"\n",
        &plugin_block("agent-mode", ""),
        "/mode execute\nplease plan again\n",
    );
    // Each prompt is the mode's badge, then the context's once a call was made.
    let execute = stdout.find("[execute] ").unwrap_or_else(|| panic!("no execute badge:\n{stdout}"));
    let plan = stdout.rfind("[plan] ").unwrap_or_else(|| panic!("no plan badge:\n{stdout}"));
    assert!(execute < plan, "the badge follows the model's switch back to plan:\n{stdout}");
    // One line per switch, the operator's and the model's alike, drawn from the view.
    assert_eq!(stdout.matches("Mode: plan → execute").count(), 1, "{stdout}");
    assert_eq!(stdout.matches("Mode: execute → plan").count(), 1, "the model's switch is shown:\n{stdout}");
    assert!(
        !stdout.contains("plan -> execute") && !stdout.contains("mode → "),
        "a switch said twice:\n{stdout}"
    );
}

#[tokio::test]
async fn a_reload_that_drops_the_current_mode_falls_back_and_tells_the_model_once() {
    let model = FakeModel::start().await;
    model.push(Reply::text("after reload"));
    model.push(Reply::text("later"));
    let test = host_with(&model, CUSTOM).await;
    let session = test.session();
    command(&test, &session, "/mode ship").await.unwrap();
    // The operator edits config.toml: `ship` is gone, `sketch` is the new default.
    let shrunk = "[plugin.config]\ndefault_mode = \"sketch\"\n[[plugin.config.modes]]\nname = \"sketch\"\ndescription = \"Only sketches.\"\n";
    let plugins = format!("{}{}", plugin_block("agent-mode", shrunk), plugin_block("misbehave", ""));
    std::fs::write(test.dir.path().join("config.toml"), config_text(&model.url(), &plugins)).unwrap();
    test.host.reload(&*test.events).await.unwrap();
    test.take_events();
    test.turn(&session, "carry on").await.unwrap();
    test.turn(&session, "and on").await.unwrap();

    let requests = model.requests();
    assert_eq!(
        occurrences(&requests, "[Mode changed:"),
        1,
        "one message, not a fallback plus the old notice"
    );
    assert_eq!(occurrences(&requests[..1], "`ship` is no longer configured"), 1);
    assert!(system_prompt(&requests[0]).contains("The current mode is `sketch`"));
    assert_eq!(session.lock().await.bag().get_json("agent-mode", "mode"), Some(json!("sketch")));
    assert_eq!(mode_changes(&test), [json!({"from": "ship", "to": "sketch", "by": "host"})]);
}

#[tokio::test]
async fn a_reload_that_adds_a_mode_keeps_the_current_one_and_offers_the_new_one() {
    let model = FakeModel::start().await;
    model.push(Reply::text("shipping"));
    model.push(Reply::tool("mode_set", r#"{"mode":"review"}"#));
    model.push(Reply::text("reviewing"));
    let test = host_with(&model, CUSTOM).await;
    let session = test.session();
    command(&test, &session, "/mode ship").await.unwrap();
    test.turn(&session, "go").await.unwrap();
    // The operator adds a `review` mode to config.toml while the session is in `ship`.
    let grown = format!(
        "{CUSTOM}\n[[plugin.config.modes]]\nname = \"review\"\ndescription = \"Read it over.\"\nallow_mutating = false\n"
    );
    let plugins = format!("{}{}", plugin_block("agent-mode", &grown), plugin_block("misbehave", ""));
    std::fs::write(test.dir.path().join("config.toml"), config_text(&model.url(), &plugins)).unwrap();
    test.host.reload(&*test.events).await.unwrap();
    test.turn(&session, "look it over").await.unwrap();

    let requests = model.requests();
    assert!(!system_prompt(&requests[0]).contains("#### review"), "not configured yet");
    let prompt = system_prompt(&requests[1]);
    assert!(prompt.contains("#### review\n\nRead it over.\nNOW=ship"), "{prompt}");
    assert_eq!(occurrences(&requests, "[Mode changed:"), 1, "only the operator's switch, before the reload");
    assert!(system_prompt(&requests[2]).contains("NOW=review"));
    assert!(!call(&test, &session, "touch", json!({})).await.ok, "the new mode's rules apply");
    assert_eq!(
        mode_changes(&test),
        [
            json!({"from": "draft", "to": "ship", "by": "operator"}),
            json!({"from": "ship", "to": "review", "by": "model"})
        ]
    );
}

#[tokio::test]
async fn plan_keeps_the_todo_tools_available() {
    let model = FakeModel::start().await;
    let plugins = format!("{}{}", plugin_block("agent-mode", ""), plugin_block("todo", ""));
    let test = TestHost::with_plugins(&model, &plugins).await;
    let session = test.session();
    let added = call(&test, &session, "todos_add", json!({"todos": [{"title": "sketch the plan"}]})).await;
    assert!(added.ok, "todo tools are bookkeeping, not mutation: {added:?}");
    assert_eq!(call(&test, &session, "mode_get", json!({})).await.output, "plan");
}
