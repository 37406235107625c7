//! Child agents (contract 0.2.8) through `agent-host serve`, the real binary over real HTTP:
//! the session's stream carries a child's start, its wrapped events and its end;
//! `GET /v1/sessions/{id}/children` lists the children (an unknown or another principal's
//! session is 404); a child's session is its parent's owner's to read and to talk to, an
//! admin's list says whose child it is, and the server's figures count its calls; cancelling
//! a child's session stops that child alone; and two children
//! running at once whose calls share an id each ask, on the parent's stream, and are answered
//! apart by naming the child's session.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::serve_metrics::scrape;
use crate::subagents::{EXPLORER, agent, definitions, subagents, system, task, tools};
use crate::support::serve::serve;
use crate::support::{ASK_ABOUT_TOUCH, FakeModel, Reply, plugin_block};

fn of_type<'a>(events: &'a [(u64, Value)], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|(_, event)| event["type"] == kind).map(|(_, event)| event).collect()
}

/// The child events (`subagent`) among `events` whose own event is of `kind`.
fn wrapped<'a>(events: &'a [(u64, Value)], kind: &str) -> Vec<&'a Value> {
    of_type(events, "subagent").into_iter().filter(|event| event["event"]["type"] == kind).collect()
}

#[tokio::test]
async fn the_stream_carries_a_child_and_the_children_route_lists_it_for_its_owner() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("task", &task("explorer", "find the answer")));
    model.push(Reply::text("the explorer says 42"));
    model.on_model(
        "child-model",
        [
            Reply::tool("echo", r#"{"text":"looking"}"#),
            Reply::text("the answer is 42"),
            Reply::text("I echoed, then knew"),
        ],
    );
    let agents = definitions(&[("explorer", EXPLORER)]);
    let plugins = format!("{}{}", plugin_block("misbehave", ""), subagents(agents.path()));
    let server = serve(&model, &plugins, "").await;
    let session = server.new_session("alice").await;
    let (status, listed) = server.get("alice", &format!("/v1/sessions/{session}/children")).await;
    assert_eq!((status, listed), (StatusCode::OK, json!({"children": []})), "none before the turn");

    let events = server.turn_events("alice", &session, "ask the explorer").await;
    let call = of_type(&events, "tool_call")[0]["id"].clone();
    let started = of_type(&events, "subagent_started");
    assert_eq!(started.len(), 1, "{events:?}");
    assert_eq!((&started[0]["parent_id"], &started[0]["call_id"]), (&json!(session), &call));
    let child = started[0]["session_id"].as_str().unwrap().to_owned();
    let calls = wrapped(&events, "tool_call");
    assert_eq!(calls.len(), 1, "the child's own call, on its parent's stream: {events:?}");
    assert_eq!(
        (calls[0]["session_id"].as_str(), calls[0]["parent_id"].as_str()),
        (Some(&*child), Some(&*session))
    );
    assert_eq!(calls[0]["event"]["name"], "echo");
    let ended = of_type(&events, "subagent_ended");
    assert_eq!(
        (ended[0]["state"].as_str(), ended[0]["answer"].as_str()),
        (Some("done"), Some("the answer is 42"))
    );

    let (status, listed) = server.get("alice", &format!("/v1/sessions/{session}/children")).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(
        listed,
        json!({"children": [{
            "id": child, "number": 1, "agent": "explorer", "state": "done",
            "call_id": call, "answer": "the answer is 42"
        }]})
    );
    // The child's session is alice's to read, as her session's; nobody else's.
    let (status, detail) = server.get("alice", &format!("/v1/sessions/{child}")).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    let contents: Vec<&str> =
        detail["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!((contents[0], *contents.last().unwrap()), ("find the answer", "the answer is 42"));
    for path in [format!("/v1/sessions/{session}/children"), format!("/v1/sessions/{child}")] {
        let (status, body) = server.get("bob", &path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
    }
    let (status, body) = server.get("alice", "/v1/sessions/no-such-session/children").await;
    assert_eq!((status, &body["error"]), (StatusCode::NOT_FOUND, &json!("no such session")));
    // A child is no session of its owner's list: it is reached through its parent.
    let (_, sessions) = server.get("alice", "/v1/sessions").await;
    assert_eq!(sessions["sessions"].as_array().unwrap().len(), 1, "{sessions}");
    // An admin's list has every session, a child saying whose it is.
    let (_, all) = server.get("root", "/v1/sessions").await;
    let listed = all["sessions"].as_array().unwrap();
    let entry = |id: &str| listed.iter().find(|s| s["id"] == id).unwrap_or_else(|| panic!("{id} in {all}"));
    assert_eq!((&entry(&child)["parent"], &entry(&child)["owner"]), (&json!(session), &json!("alice")));
    assert!(entry(&session).get("parent").is_none(), "{all}");

    // The operator talks to the child itself: its turn is narrowed as its start made it, and
    // goes on from its history.
    let events = server.turn_events("alice", &child, "and how did you find it?").await;
    assert_eq!(events.last().unwrap().1["reason"], "done", "{events:?}");
    let asked = model.requests_to("child-model");
    let last = asked.last().unwrap();
    assert!(system(last).starts_with("You are the explorer."), "{}", system(last));
    assert_eq!(tools(last), ["echo"], "only its definition's tools");
    let said = last["messages"].to_string();
    assert!(said.contains("find the answer") && said.contains("and how did you find it?"), "{said}");
    let (_, detail) = server.get("alice", &format!("/v1/sessions/{child}")).await;
    assert_eq!(detail["messages"].as_array().unwrap().last().unwrap()["content"], "I echoed, then knew");
    // ... and what it was started with: its definition's body (trimmed) as its system prompt.
    assert_eq!(
        detail["agent"],
        json!({
            "parent": session, "name": "explorer", "system_prompt": "You are the explorer. Answer in one line.",
            "tools": ["echo"], "model": "child-model"
        })
    );
    let (_, parent_detail) = server.get("alice", &format!("/v1/sessions/{session}")).await;
    assert!(parent_detail.get("agent").is_none(), "{parent_detail}");

    // The server's figures count the child's calls with its parent's: the parent's two model
    // calls, the child's two in the task and one when talked to; one child turn within a
    // turn, and two turns of their own (the parent's, the child's when talked to).
    let (_, samples) = scrape(&server, "root").await;
    let sample = |name: &str| *samples.get(name).unwrap_or_else(|| panic!("{name} in {samples:#?}"));
    assert_eq!(sample("agent_host_model_calls_total{}"), 5.0);
    assert_eq!(sample("agent_host_model_call_seconds_count{}"), 5.0);
    assert_eq!(sample("agent_host_child_turns_total{end=done}"), 1.0);
    assert_eq!(sample("agent_host_turns_total{end=done}"), 2.0);
    assert_eq!(sample("agent_host_tool_calls_total{decision=allowed}"), 2.0, "the task and the echo");
}

#[tokio::test]
async fn cancelling_a_childs_session_stops_that_child_and_its_parent_goes_on() {
    let model = FakeModel::start().await;
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    model.push(Reply::tool("task", &task("explorer", "take your time")));
    model.push(Reply::text("went on without the explorer"));
    model.on_model("child-model", [Reply::text("too late").held_until(&gate)]);
    let agents = definitions(&[("explorer", EXPLORER)]);
    let plugins = format!("{}{}", plugin_block("misbehave", ""), subagents(agents.path()));
    let server = serve(&model, &plugins, "").await;
    let session = server.new_session("alice").await;
    let (status, _) =
        server.post("alice", &format!("/v1/sessions/{session}/messages"), json!({"text": "explore"})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let started =
        server.events_until("alice", &session, None, |event| event["type"] == "subagent_started").await;
    let child = started.last().unwrap().1["session_id"].as_str().unwrap().to_owned();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while model.requests_to("child-model").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the child should ask its model");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (status, body) = server.post("bob", &format!("/v1/sessions/{child}/cancel"), json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not bob's child: {body}");
    let (status, body) = server.post("alice", &format!("/v1/sessions/{child}/cancel"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");

    let last = started.last().unwrap().0;
    let rest =
        server.events_until("alice", &session, Some(last), |event| event["type"] == "turn_ended").await;
    let ended = of_type(&rest, "subagent_ended");
    assert_eq!(ended[0]["state"], "cancelled", "{rest:?}");
    assert_eq!(rest.last().unwrap().1["reason"], "done", "the parent's turn went on: {rest:?}");
    let parent = model.requests_to("fake");
    let results = parent[1]["messages"].to_string();
    assert!(results.contains("agent `explorer` was cancelled by the operator"), "{results}");
    gate.notify_waiters();
}

#[tokio::test]
async fn two_childrens_asks_with_one_call_id_are_answered_apart_by_naming_the_child() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("task", &task("a", "touch it")).and_tool("task", &task("b", "touch it too")));
    model.push(Reply::text("both asked"));
    // Each child's call is `call_1`: the ids of one model's replies, not of the session.
    model.on_model("model-a", [Reply::tool("touch", "{}"), Reply::text("A touched")]);
    model.on_model("model-b", [Reply::tool("touch", "{}"), Reply::text("B was refused")]);
    let agents =
        definitions(&[("a", &agent("a", "model-a", "touch")), ("b", &agent("b", "model-b", "touch"))]);
    let plugins = format!(
        "{}{}{}",
        plugin_block("misbehave", ""),
        plugin_block("permissions", ASK_ABOUT_TOUCH),
        subagents(agents.path())
    );
    let server = serve(&model, &plugins, "approval_timeout_secs = 60").await;
    let session = server.new_session("alice").await;
    let (status, _) =
        server.post("alice", &format!("/v1/sessions/{session}/messages"), json!({"text": "ask both"})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let asked = server
        .events_until("alice", &session, None, {
            let seen = std::cell::Cell::new(0);
            move |event| {
                if event["type"] == "subagent" && event["event"]["type"] == "approval_requested" {
                    seen.set(seen.get() + 1);
                }
                seen.get() == 2
            }
        })
        .await;
    let asks = wrapped(&asked, "approval_requested");
    let (ask_a, ask_b) = if asks[0]["agent"] == "a" { (asks[0], asks[1]) } else { (asks[1], asks[0]) };
    let id = ask_a["event"]["id"].as_str().unwrap();
    assert_eq!(ask_b["event"]["id"], id, "both children's calls have one id");
    let path = format!("/v1/sessions/{session}/approvals/{id}");

    let (status, body) = server.post("alice", &path, json!({"answer": "once"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "the session's own call of that id asks nothing: {body}");
    let (status, body) =
        server.post("alice", &path, json!({"answer": "once", "agent": ask_a["session_id"]})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let refusal = json!({"answer": "deny", "reason": "not this one", "agent": ask_b["session_id"]});
    let (status, body) = server.post("alice", &path, refusal).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let last = asked.last().unwrap().0;
    let rest =
        server.events_until("alice", &session, Some(last), |event| event["type"] == "turn_ended").await;
    let results = wrapped(&rest, "tool_result");
    let result_of =
        |agent: &str| results.iter().find(|event| event["agent"] == agent).unwrap()["event"].clone();
    assert_eq!(
        (result_of("a")["ok"].as_bool(), result_of("a")["output"].as_str()),
        (Some(true), Some("touched"))
    );
    assert_eq!(result_of("b")["ok"], false);
    let answered = wrapped(&rest, "approval_answered");
    assert!(
        answered.iter().any(|event| event["agent"] == "b" && event["event"]["reason"] == "not this one"),
        "{rest:?}"
    );
    assert_eq!(of_type(&rest, "subagent_ended").len(), 2);
}
