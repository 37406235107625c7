//! `agent-host serve`, the real binary over real HTTP: principals and their sessions, turns
//! started over HTTP and their events over Server-Sent Events (resumed with
//! `Last-Event-ID`), approvals answered over HTTP or timing out, limits, malformed and
//! oversized bodies, SIGTERM mid-turn, and the committed OpenAPI document.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::serve::{TOKENS, serve, token};
use crate::support::{ASK_ABOUT_TOUCH, FakeModel, Reply, config_text, plugin_block, repo_root};

fn unix_seconds() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

fn of_type<'a>(events: &'a [(u64, Value)], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|(_, event)| event["type"] == kind).map(|(_, event)| event).collect()
}

#[tokio::test]
async fn a_token_names_a_principal_who_sees_only_its_own_sessions_and_an_admin_sees_all() {
    let model = FakeModel::start().await;
    let server = serve(&model, "", "").await;
    let (status, body) = server.call(reqwest::Method::GET, None, "/v1/sessions", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body["error"].as_str().unwrap().contains("bearer token"), "{body}");
    let wrong = server
        .http
        .get(format!("{}/v1/sessions", server.base))
        .bearer_auth("alice-token-not")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);

    let made = unix_seconds();
    let session = server.new_session("alice").await;
    let (status, _) = server.get("bob", &format!("/v1/sessions/{session}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "another principal's session is not there");
    let (status, _) = server.get("bob", "/v1/sessions/no-such-session").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) =
        server.call(reqwest::Method::DELETE, Some("bob"), &format!("/v1/sessions/{session}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) =
        server.post("bob", &format!("/v1/sessions/{session}/messages"), json!({"text": "hi"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, listed) = server.get("bob", "/v1/sessions").await;
    assert_eq!(listed["sessions"], json!([]));
    let (_, listed) = server.get("alice", "/v1/sessions").await;
    let updated_at = listed["sessions"][0]["updated_at"].as_i64().expect("a time");
    assert!((made..=unix_seconds()).contains(&updated_at), "made just now: {listed}");
    assert_eq!(
        listed["sessions"],
        json!([{ "id": session, "owner": "alice", "busy": false, "updated_at": updated_at, "title": null }])
    );
    // Its first prompt becomes its title, on one line.
    model.push(Reply::text("done"));
    let (status, _) = server
        .post(
            "alice",
            &format!("/v1/sessions/{session}/messages"),
            json!({"text": "fix the build\n  please"}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    server.events_until("alice", &session, None, |event| event["type"] == "turn_ended").await;
    let (_, listed) = server.get("root", "/v1/sessions").await;
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1, "an admin sees every session: {listed}");
    assert_eq!(listed["sessions"][0]["title"], "fix the build please", "{listed}");
    assert!(listed["sessions"][0]["updated_at"].as_i64().unwrap() >= updated_at, "{listed}");

    let (status, _) =
        server.call(reqwest::Method::DELETE, Some("alice"), &format!("/v1/sessions/{session}"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = server.get("alice", &format!("/v1/sessions/{session}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let stderr = {
        let mut child = server.child;
        child.kill().await.unwrap();
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut child.stderr.take().unwrap(), &mut text).await.unwrap();
        text
    };
    for (_, _, token) in TOKENS {
        assert!(!stderr.contains(token), "a token was logged: {stderr}");
    }
}

#[tokio::test]
async fn a_message_starts_a_turn_whose_events_stream_and_whose_history_is_kept() {
    let model = FakeModel::start().await;
    let todo = r#"{"todos": [{"title": "one step"}]}"#;
    model.push(Reply::tool("echo", r#"{"text": "from the tool"}"#).and_tool("todos_add", todo));
    model.push(Reply::text("all done"));
    // The todo left open must not send the model back to work: the script ends here.
    let todo_plugin = plugin_block("todo", "[plugin.config.loop]\nenabled = false");
    let plugins = format!("{}{todo_plugin}", plugin_block("misbehave", ""));
    let server = serve(&model, &plugins, "").await;
    let session = server.new_session("alice").await;
    let events = server.turn_events("alice", &session, "use the tool").await;
    let ids: Vec<u64> = events.iter().map(|(id, _)| *id).collect();
    assert!(ids.windows(2).all(|pair| pair[1] == pair[0] + 1), "numbered in order: {ids:?}");
    assert_eq!(of_type(&events, "user_message")[0]["text"], "use the tool");
    let result = of_type(&events, "tool_result")[0];
    assert_eq!((result["ok"].as_bool(), result["output"].as_str()), (Some(true), Some("from the tool")));
    assert_eq!(of_type(&events, "turn_ended")[0]["reason"], "done");

    let (status, detail) = server.get("alice", &format!("/v1/sessions/{session}")).await;
    assert_eq!(status, StatusCode::OK);
    let roles: Vec<&str> =
        detail["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "assistant"]);
    assert_eq!(detail["messages"][4]["content"], "all done");
    // What the plugins show, not how they keep it: the todo plugin's checklist.
    assert!(detail.get("state").is_none(), "no raw state for a front end: {detail}");
    let todo = detail["views"].as_array().unwrap().iter().find(|view| view["plugin"] == "todo").unwrap();
    assert_eq!(todo["widgets"][0]["widget"], "checklist", "{detail}");
    let entry = &todo["widgets"][0]["entries"][0];
    assert_eq!(
        (entry["title"].as_str(), entry["state"].as_str()),
        (Some("one step"), Some("pending")),
        "{detail}"
    );
    // The views include every event up to the id given with them: at least the turn's.
    let last = detail["last_event_id"].as_str().unwrap();
    let (epoch, number) = last.split_once('-').unwrap();
    assert!(
        number.parse::<u64>().unwrap() >= *ids.last().unwrap() && epoch.len() == 8,
        "{last} after {ids:?}"
    );

    // The raw state is an admin's, to look into a plugin: not alice's.
    let (status, body) = server.get("alice", &format!("/v1/sessions/{session}/state")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"].as_str().unwrap().contains("[serve] admins"), "{body}");
    let (status, raw) = server.get("root", &format!("/v1/sessions/{session}/state")).await;
    assert_eq!(status, StatusCode::OK, "{raw}");
    assert_eq!(raw["state"]["todo"]["items"][0]["title"], "one step", "the plugins' state: {raw}");
    let namespaces: Vec<&String> = raw["state"].as_object().unwrap().keys().collect();
    assert!(namespaces.iter().all(|namespace| !namespace.starts_with("agent-host.")), "{namespaces:?}");
    assert_eq!((detail["busy"].as_bool(), detail["model_calls"].as_u64()), (Some(false), Some(2)));

    // A client that saw up to the tool call reconnects and gets exactly what followed.
    let call = events.iter().find(|(_, event)| event["type"] == "tool_call").unwrap().0;
    let resumed =
        server.events_until("alice", &session, Some(call), |event| event["type"] == "turn_ended").await;
    let expected: Vec<&(u64, Value)> = events.iter().filter(|(id, _)| *id > call).collect();
    assert_eq!(resumed.iter().collect::<Vec<_>>(), expected);
}

#[tokio::test]
async fn a_busy_session_is_409_and_a_principal_past_its_cap_is_429() {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    model.push(Reply::text("slow").held_until(&gate));
    model.fallback(Reply::text("quick"));
    let server = serve(&model, "", "max_turns_per_principal = 1").await;
    let first = server.new_session("alice").await;
    let second = server.new_session("alice").await;
    let (status, _) =
        server.post("alice", &format!("/v1/sessions/{first}/messages"), json!({"text": "one"})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    // The held reply goes to the first request the endpoint sees: let it be this turn's, not
    // bob's below, whatever the machine's load.
    let asked = async {
        while model.requests().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await
        }
    };
    tokio::time::timeout(Duration::from_secs(10), asked).await.unwrap();
    let (status, body) =
        server.post("alice", &format!("/v1/sessions/{first}/messages"), json!({"text": "two"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, body) =
        server.post("alice", &format!("/v1/sessions/{second}/messages"), json!({"text": "three"})).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert!(body["error"].as_str().unwrap().contains("max_turns_per_principal"), "{body}");
    let bobs = server.new_session("bob").await;
    let (status, _) =
        server.post("bob", &format!("/v1/sessions/{bobs}/messages"), json!({"text": "mine"})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "the cap is per principal");
    let (_, listed) = server.get("alice", "/v1/sessions").await;
    assert!(
        listed["sessions"].as_array().unwrap().iter().any(|s| s["id"] == first && s["busy"] == true),
        "{listed}"
    );
    gate.notify_one();
    server.events_until("alice", &first, None, |event| event["type"] == "turn_ended").await;
    let (status, _) =
        server.post("alice", &format!("/v1/sessions/{second}/messages"), json!({"text": "now"})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "the slot was freed");
}

#[tokio::test]
async fn an_approval_is_answered_over_http_and_an_unanswered_one_times_out_to_on_ask() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("touch", "{}"));
    model.push(Reply::text("touched it"));
    model.push(Reply::tool("touch", "{}"));
    model.push(Reply::text("could not"));
    let plugins =
        format!("{}{}", plugin_block("misbehave", ""), plugin_block("permissions", ASK_ABOUT_TOUCH));
    let server = serve(&model, &plugins, "approval_timeout_secs = 1").await;
    let session = server.new_session("alice").await;
    let (status, _) =
        server.post("alice", &format!("/v1/sessions/{session}/messages"), json!({"text": "touch"})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let asked =
        server.events_until("alice", &session, None, |event| event["type"] == "approval_requested").await;
    let ask = of_type(&asked, "approval_requested")[0];
    assert_eq!(
        (ask["name"].as_str(), ask["reason"].as_str()),
        (Some("touch"), Some("touching needs a look"))
    );
    let path = format!("/v1/sessions/{session}/approvals/{}", ask["id"].as_str().unwrap());
    let (status, body) = server.post("bob", &path, json!({"answer": "once"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not bob's to answer: {body}");
    let (status, body) = server.post("alice", &path, json!({"answer": "once"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let last = asked.last().unwrap().0;
    let rest =
        server.events_until("alice", &session, Some(last), |event| event["type"] == "turn_ended").await;
    let result = of_type(&rest, "tool_result")[0];
    assert_eq!((result["ok"].as_bool(), result["output"].as_str()), (Some(true), Some("touched")));
    let (status, _) = server.post("alice", &path, json!({"answer": "once"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "answered already");

    // Nobody answers the second: after a second, `agent.on_ask` (deny) decides.
    let seen = rest.last().unwrap().0;
    let (status, _) =
        server.post("alice", &format!("/v1/sessions/{session}/messages"), json!({"text": "again"})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let events =
        server.events_until("alice", &session, Some(seen), |event| event["type"] == "turn_ended").await;
    assert_eq!(of_type(&events, "approval_requested").len(), 1);
    let result = of_type(&events, "tool_result")[0].clone();
    assert_eq!(result["ok"], false);
    assert!(result["output"].as_str().unwrap().contains("nobody could answer"), "{result}");
}

#[tokio::test]
async fn commands_run_over_http_and_bad_bodies_are_refused_with_a_reason() {
    let model = FakeModel::start().await;
    let server = serve(&model, "", "max_body_kb = 4").await;
    let session = server.new_session("alice").await;
    let (status, body) =
        server.post("alice", &format!("/v1/sessions/{session}/commands"), json!({"line": "/session"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["output"].as_str().unwrap().contains(&session), "{body}");
    let (status, body) =
        server.post("alice", &format!("/v1/sessions/{session}/commands"), json!({"line": "/nonsense"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    let url = format!("{}/v1/sessions/{session}/messages", server.base);
    let malformed = server
        .http
        .post(&url)
        .bearer_auth(token("alice"))
        .header("content-type", "application/json")
        .body("{\"text\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);
    let body: Value = malformed.json().await.unwrap();
    assert!(body["error"].as_str().is_some_and(|error| !error.is_empty()), "{body}");
    let wrong_field =
        server.post("alice", &format!("/v1/sessions/{session}/messages"), json!({"txt": "typo"})).await;
    assert_eq!(wrong_field.0, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", wrong_field.1);
    let huge = json!({ "text": "x".repeat(8 * 1024) });
    let (status, _) = server.post("alice", &format!("/v1/sessions/{session}/messages"), huge).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(model.requests().is_empty(), "no refused body reached the model");
    let mut crowded = server.http.get(format!("{}/v1/sessions", server.base)).bearer_auth(token("alice"));
    for n in 0..200 {
        crowded = crowded.header(format!("x-filler-{n}"), "x");
    }
    let refused = crowded.send().await.map(|response| response.status());
    assert!(
        matches!(refused, Ok(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)) || refused.is_err(),
        "too many headers were taken: {refused:?}"
    );
}

#[tokio::test]
async fn sigterm_mid_turn_exits_within_the_grace_and_the_session_resumes() {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    model.push(Reply::tool("echo", r#"{"text": "kept"}"#));
    model.push(Reply::text("never heard").held_until(&gate));
    let mut server = serve(&model, &plugin_block("misbehave", ""), "shutdown_grace_secs = 1").await;
    let session = server.new_session("alice").await;
    let (status, _) =
        server.post("alice", &format!("/v1/sessions/{session}/messages"), json!({"text": "go"})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    server.events_until("alice", &session, None, |event| event["type"] == "tool_result").await;
    let waiting = async {
        while model.requests().len() < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await
        }
    };
    tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap();
    let pid = server.child.id().unwrap();
    std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    let status =
        tokio::time::timeout(Duration::from_secs(15), server.child.wait()).await.expect("it exits").unwrap();
    assert!(status.success(), "{status}");

    // The step before the cut is committed; the session resumes in a new process.
    model.push(Reply::text("resumed"));
    let output = crate::support::json_prompt_command(server.dir.path(), Some(&session), "carry on")
        .env("AGENT_HOST_TEST_KEY", "k")
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let last = model.requests().last().unwrap().clone();
    let tool_results: Vec<&Value> =
        last["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").collect();
    assert!(tool_results.iter().any(|m| m["content"] == "kept"), "{last}");
    gate.notify_one();
}

#[tokio::test]
async fn serve_refuses_a_non_loopback_address_without_insecure() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "{}\n[serve]\ntokens = {{ alice = \"AGENT_HOST_T_ALICE\" }}\n",
        config_text("http://127.0.0.1:9/v1", "")
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .arg("serve")
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .args(["--listen", "0.0.0.0:0"])
        .env("AGENT_HOST_TEST_KEY", "k")
        .env("AGENT_HOST_T_ALICE", "t")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a loopback address") && stderr.contains("--insecure"), "{stderr}");
}

#[tokio::test]
async fn the_served_openapi_document_is_the_committed_one() {
    let model = FakeModel::start().await;
    let server = serve(&model, "", "").await;
    let served =
        server.http.get(format!("{}/openapi.json", server.base)).send().await.unwrap().text().await.unwrap();
    let committed = std::fs::read_to_string(repo_root().join("docs/openapi.json")).unwrap();
    assert_eq!(served, committed);
    let (status, _) = server.call(reqwest::Method::GET, None, "/healthz", None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = server.call(reqwest::Method::GET, None, "/readyz", None).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_running_turn_is_cancelled_over_http_and_only_an_admin_may_reload() {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    model.push(Reply::text("never sent").held_until(&gate));
    model.fallback(Reply::text("after the cancel"));
    let server = serve(&model, "", "").await;
    let session = server.new_session("alice").await;
    let (status, _) =
        server.post("alice", &format!("/v1/sessions/{session}/messages"), json!({"text": "slow"})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let waiting = async {
        while model.requests().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await
        }
    };
    tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap();
    let (status, _) = server.post("alice", &format!("/v1/sessions/{session}/cancel"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let events = server.events_until("alice", &session, None, |event| event["type"] == "turn_ended").await;
    assert_eq!(of_type(&events, "turn_ended")[0]["reason"], "cancelled");
    let seen = events.last().unwrap().0;
    let (status, _) =
        server.post("alice", &format!("/v1/sessions/{session}/messages"), json!({"text": "again"})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "the session is free again");
    let events =
        server.events_until("alice", &session, Some(seen), |event| event["type"] == "turn_ended").await;
    assert!(
        of_type(&events, "assistant_message").iter().any(|m| m["text"] == "after the cancel"),
        "{events:?}"
    );
    gate.notify_one();

    let (status, body) = server.post("alice", "/v1/reload", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, body) = server.post("root", "/v1/reload", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = server.get("bob", "/v1/plugins").await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
