//! What one principal of `agent-host serve` can do to the deployment and to the others, the
//! real binary over real HTTP with two principals (`alice`, `bob`) and an admin (`root`):
//! no file written on the server, no admin operation or policy switch through `/commands`,
//! no lease taken on another's session nor a word of who holds it, lists filtered by owner
//! in the store, and a cap on the sessions each may keep.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::serve::serve;
use crate::support::{FakeModel, Reply, json_prompt_command, plugin_block};

async fn command(
    server: &crate::support::serve::Server,
    who: &str,
    session: &str,
    line: &str,
) -> (StatusCode, Value) {
    server.post(who, &format!("/v1/sessions/{session}/commands"), json!({ "line": line })).await
}

fn error_of(body: &Value) -> &str {
    body["error"].as_str().unwrap_or_else(|| panic!("no error text: {body}"))
}

#[tokio::test]
async fn an_export_over_http_is_a_response_body_never_a_file_written_on_the_server() {
    let model = FakeModel::start().await;
    model.push(Reply::text("hello alice"));
    let server = serve(&model, "", "").await;
    let alices = server.new_session("alice").await;
    server.turn_events("alice", &alices, "hi").await;
    let bobs = server.new_session("bob").await;
    let store = server.dir.path().join("sessions.db");
    let planted = server.dir.path().join("planted-by-bob.json");
    for target in [&store, &planted] {
        let (status, body) = command(&server, "bob", &bobs, &format!("/export {}", target.display())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(error_of(&body).contains(&format!("GET /v1/sessions/{bobs}/export")), "{body}");
    }
    assert!(!planted.exists(), "bob wrote a file on the server");
    let header = std::fs::read(&store).unwrap();
    assert!(header.starts_with(b"SQLite format 3\0"), "the store was overwritten");

    let (status, document) = server.get("alice", &format!("/v1/sessions/{alices}/export")).await;
    assert_eq!(status, StatusCode::OK, "{document}");
    assert_eq!(document["format"], "agent-host-session", "{document}");
    let texts: Vec<&str> = document["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["message"]["content"].as_str())
        .collect();
    assert_eq!(texts, ["hi", "hello alice"]);
    let (status, body) = server.get("bob", &format!("/v1/sessions/{alices}/export")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not bob's to read: {body}");
    // The store still serves alice's session.
    let (status, _) = server.get("alice", &format!("/v1/sessions/{alices}")).await;
    assert_eq!(status, StatusCode::OK);
}

const READ_ONLY: &str = "[plugin.config]\npreset = \"read-only\"";

#[tokio::test]
async fn over_http_reload_is_for_admins_and_a_plugins_command_for_whom_the_config_names() {
    let model = FakeModel::start().await;
    let plugins = format!("{}{}", plugin_block("misbehave", ""), plugin_block("permissions", READ_ONLY));
    let server = serve(&model, &plugins, "").await;
    let bobs = server.new_session("bob").await;
    let (status, body) = command(&server, "bob", &bobs, "/reload").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(error_of(&body).contains("admin"), "{body}");
    let (status, body) = command(&server, "bob", &bobs, "/permissions trust").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(error_of(&body).contains("[serve] plugin_commands"), "{body}");
    let (_, raw) = server.get("root", &format!("/v1/sessions/{bobs}/state")).await;
    assert!(raw["state"].get("permissions").is_none(), "the preset moved: {raw}");
    for line in ["/session", "/help", "/plugins", "/approvals"] {
        let (status, body) = command(&server, "bob", &bobs, line).await;
        assert_eq!(status, StatusCode::OK, "{line}: {body}");
    }
    let (status, body) = command(&server, "bob", &bobs, "/nonsense").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "an unknown command is still unknown: {body}");

    let roots = server.new_session("root").await;
    let (status, body) = command(&server, "root", &roots, "/permissions trust").await;
    assert_eq!(status, StatusCode::OK, "an admin runs every plugin's command: {body}");
    let (status, body) = command(&server, "root", &roots, "/reload").await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The operator may open a plugin's command to every principal.
    let open = serve(&model, &plugins, "plugin_commands = [\"permissions\"]").await;
    let bobs = open.new_session("bob").await;
    let (status, body) = command(&open, "bob", &bobs, "/permissions trust").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = command(&open, "bob", &bobs, "/reload").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn an_owner_switches_a_views_choice_to_a_listed_value_though_its_command_is_closed() {
    let model = FakeModel::start().await;
    let server = serve(&model, &plugin_block("agent-mode", ""), "").await;
    let bobs = server.new_session("bob").await;
    let current = |detail: &Value| {
        let view =
            detail["views"].as_array().unwrap().iter().find(|view| view["plugin"] == "agent-mode").cloned();
        view.map(|view| view["widgets"][0]["current"].clone())
    };
    let (_, detail) = server.get("bob", &format!("/v1/sessions/{bobs}")).await;
    assert_eq!(current(&detail), Some(json!("plan")), "{detail}");
    assert_eq!(detail["views"][0]["widgets"][0]["command"], "/mode", "{detail}");
    // Typed as a command line, the plugin's command stays closed to bob...
    let (status, body) = command(&server, "bob", &bobs, "/mode execute").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    // ...but the switch the view offers is his to make, in his session.
    let switch = format!("/v1/sessions/{bobs}/views/agent-mode/mode");
    let (status, switched) = server.post("bob", &switch, json!({ "value": "execute" })).await;
    assert_eq!(status, StatusCode::OK, "{switched}");
    assert_eq!(switched["view"]["widgets"][0]["current"], "execute", "{switched}");
    let (_, detail) = server.get("bob", &format!("/v1/sessions/{bobs}")).await;
    assert_eq!(current(&detail), Some(json!("execute")), "{detail}");
    let changed = server
        .events_until("bob", &bobs, None, |event| {
            event["type"] == "view_changed" && event["widgets"][0]["current"] == "execute"
        })
        .await;
    assert!(changed.iter().any(|(_, event)| event["type"] == "view_changed"), "the switch is on the stream");

    // Only a value the choice lists: the refusal names the choice and its values.
    let (status, body) = server.post("bob", &switch, json!({ "value": "execute; /reload" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let error = error_of(&body);
    assert!(error.contains("`mode`") && error.contains("`plan`") && error.contains("`execute`"), "{body}");
    let (_, detail) = server.get("bob", &format!("/v1/sessions/{bobs}")).await;
    assert_eq!(current(&detail), Some(json!("execute")), "a refused value moves nothing: {detail}");
    let (status, body) = server
        .post("bob", &format!("/v1/sessions/{bobs}/views/agent-mode/other"), json!({ "value": "plan" }))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // Another's session is not his to switch, and looks like none.
    let alices = server.new_session("alice").await;
    let (status, _) = server
        .post("bob", &format!("/v1/sessions/{alices}/views/agent-mode/mode"), json!({ "value": "plan" }))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// Runs `--prompt` on the server's deployment, as a console user would, with `session`.
async fn console_prompt(dir: &std::path::Path, session: Option<&str>, prompt: &str) -> std::process::Output {
    json_prompt_command(dir, session, prompt).env("AGENT_HOST_TEST_KEY", "k").output().await.unwrap()
}

#[tokio::test]
async fn a_non_owner_takes_no_lease_on_a_session_and_hears_nothing_of_who_holds_it() {
    let model = FakeModel::start().await;
    model.fallback(Reply::text("ok"));
    let server = serve(&model, "", "").await;
    let dir = server.dir.path();
    let made = console_prompt(dir, None, "made at the console").await;
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let (_, listed) = server.get("root", "/v1/sessions").await;
    let console = listed["sessions"][0]["id"].as_str().unwrap().to_owned();

    let (status, body) = server.get("bob", &format!("/v1/sessions/{console}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let resumed = console_prompt(dir, Some(&console), "still mine").await;
    assert!(
        resumed.status.success(),
        "bob's request kept the console out: {}",
        String::from_utf8_lossy(&resumed.stderr)
    );

    // While the console runs a turn in it, another principal learns nothing of it.
    let gate = Arc::new(tokio::sync::Notify::new());
    model.push(Reply::text("slow").held_until(&gate));
    let before = model.requests().len();
    let running = tokio::spawn({
        let dir = dir.to_owned();
        let console = console.clone();
        async move { console_prompt(&dir, Some(&console), "hold it").await }
    });
    let waiting = async {
        while model.requests().len() == before {
            tokio::time::sleep(Duration::from_millis(20)).await
        }
    };
    tokio::time::timeout(Duration::from_secs(30), waiting).await.unwrap();
    for who in ["bob", "alice"] {
        let (status, body) = server.get(who, &format!("/v1/sessions/{console}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{who}: {body}");
        assert!(!body.to_string().contains("in use"), "{body}");
    }
    let (status, body) =
        server.post("root", &format!("/v1/sessions/{console}/messages"), json!({"text": "mine now"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "an admin hears it is in use: {body}");
    assert!(error_of(&body).contains("in use"), "{body}");
    // Reading it takes no lease: an admin reads what is committed, and that it is busy.
    let (status, body) = server.get("root", &format!("/v1/sessions/{console}")).await;
    assert_eq!((status, &body["busy"]), (StatusCode::OK, &json!(true)), "{body}");
    gate.notify_one();
    let ended = running.await.unwrap();
    assert!(ended.status.success(), "{}", String::from_utf8_lossy(&ended.stderr));
}

#[tokio::test]
async fn an_owner_hears_her_session_is_in_use_elsewhere_but_not_by_whom() {
    let model = FakeModel::start().await;
    let first = serve(&model, "", "").await;
    let alices = first.new_session("alice").await;
    let second = first.another_on_the_same_store().await;
    let (status, body) = second.get("bob", &format!("/v1/sessions/{alices}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(!body.to_string().contains("in use"), "{body}");
    let holder = first.child.id().unwrap().to_string();
    for who in ["alice", "root"] {
        let (status, body) =
            second.post(who, &format!("/v1/sessions/{alices}/messages"), json!({"text": "hi"})).await;
        assert_eq!(status, StatusCode::CONFLICT, "{who}: {body}");
        assert!(error_of(&body).contains("in use by another process"), "{body}");
        assert!(!error_of(&body).contains(&holder), "the holder's pid: {body}");
        // Reading needs no lease: what is committed, marked busy.
        let (status, body) = second.get(who, &format!("/v1/sessions/{alices}")).await;
        assert_eq!((status, &body["busy"]), (StatusCode::OK, &json!(true)), "{who}: {body}");
    }
    let (_, listed) = second.get("alice", "/v1/sessions").await;
    assert_eq!(listed["sessions"][0]["id"], alices.as_str(), "listing leases nothing: {listed}");
    let (status, _) = first.get("alice", &format!("/v1/sessions/{alices}")).await;
    assert_eq!(status, StatusCode::OK, "the first server still has it");
}

#[tokio::test]
async fn a_principals_list_holds_her_sessions_however_many_others_keep() {
    let model = FakeModel::start().await;
    let server = serve(&model, "", "event_buffer = 1").await;
    let bobs = server.new_session("bob").await;
    for _ in 0..1_000 {
        server.new_session("alice").await;
    }
    let (status, listed) = server.get("bob", "/v1/sessions").await;
    assert_eq!(status, StatusCode::OK);
    let updated_at = listed["sessions"][0]["updated_at"].clone();
    assert_eq!(
        listed["sessions"],
        json!([{ "id": bobs, "owner": "bob", "busy": false, "updated_at": updated_at, "title": null }])
    );
    assert!(updated_at.is_i64(), "{listed}");
    let (_, listed) = server.get("alice", "/v1/sessions").await;
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1_000);
}

#[tokio::test]
async fn a_principal_past_her_session_cap_is_429_and_others_are_not() {
    let model = FakeModel::start().await;
    let server = serve(&model, "", "max_sessions_per_principal = 2").await;
    let first = server.new_session("alice").await;
    server.new_session("alice").await;
    let (status, body) = server.post("alice", "/v1/sessions", json!({})).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert!(error_of(&body).contains("max_sessions_per_principal"), "{body}");
    server.new_session("bob").await;
    let (status, _) =
        server.call(reqwest::Method::DELETE, Some("alice"), &format!("/v1/sessions/{first}"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    server.new_session("alice").await;
}
