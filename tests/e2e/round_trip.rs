//! One model round trip end to end: the fake server drives a tool call into a real
//! component; the reply, the state in SQLite and the events are checked.

use agent_host::state::{SessionStore, SqliteStore};
use agent_host::{Event, TurnEnd};
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, plugin_block};

async fn remember_then_answer(stream: bool) {
    let model = FakeModel::start().await;
    let remember = Reply::tool("remember", r#"{"key":"colour","value":"teal"}"#);
    let done = Reply::text("I will remember teal.");
    model.push(if stream { remember } else { remember.whole() });
    model.push(if stream { done } else { done.whole() });
    let test = TestHost::with_plugins(&model, &plugin_block("misbehave", "")).await;
    let session = test.session();

    let outcome = test.turn(&session, "Remember my favourite colour: teal.").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::Done);
    assert_eq!(outcome.iterations, 2);
    assert_eq!(outcome.reply, "I will remember teal.");

    // What the model was sent: base + plugin instructions, the tools, the injected message.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    let messages = first["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert!(messages[0]["content"].as_str().unwrap().ends_with("misbehave instructions"));
    // The injected message rides on the user's turn (`injected_as = "user"`).
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "Remember my favourite colour: teal.\n\nmisbehave injected message"})
    );
    assert_eq!(messages.len(), 2);
    let tools: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"echo") && tools.contains(&"remember"), "{tools:?}");
    // The second call carries the tool result, and the injected message only once (not stored).
    let second: &Vec<Value> = requests[1]["messages"].as_array().unwrap();
    let tool_message = second.iter().find(|m| m["role"] == "tool").expect("a tool result");
    assert_eq!(tool_message["content"], "1 values remembered");
    assert_eq!(tool_message["tool_call_id"], "call_1");
    let injected = second.iter().filter(|m| m["content"] == "misbehave injected message").count();
    assert_eq!(injected, 1, "injected messages are for one call only");

    // The state bag and the history are in SQLite.
    let id = session.lock().await.id().to_owned();
    let stored = SqliteStore::open(&test.db_path()).unwrap().load(&id).unwrap().unwrap();
    let memory = stored.state.iter().find(|(ns, key, _)| ns == "misbehave" && key == "memory").unwrap();
    assert_eq!(serde_json::from_str::<Value>(&memory.2).unwrap(), json!({"colour": "teal"}));
    assert_eq!(stored.history.len(), 4, "user, assistant with call, tool result, final answer");
    assert_eq!(stored.model_calls, 2);

    // The events tell the same story, in order.
    let events = test.take_events();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            Event::UserMessage { .. } => "user",
            Event::ModelRequest { .. } => "request",
            Event::AssistantMessage { .. } => "assistant",
            Event::ToolCall { .. } => "call",
            Event::ToolResult { .. } => "result",
            Event::Plugin { .. } => "plugin",
            Event::TurnEnded { .. } => "end",
            _ => "",
        })
        .filter(|k| !k.is_empty())
        .collect();
    assert_eq!(
        kinds,
        ["user", "request", "assistant", "call", "plugin", "result", "request", "assistant", "end"]
    );
    assert!(events.iter().any(|e| matches!(e, Event::Plugin { kind, payload, .. } if kind == "remembered" && payload.value()["colour"] == "teal")));
    if stream {
        let deltas: String = events
            .iter()
            .filter_map(|e| match e {
                Event::AssistantDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, "I will remember teal.");
    }
}

#[tokio::test]
async fn streamed_tool_call_reaches_the_plugin_and_its_state_lands_in_sqlite() {
    remember_then_answer(true).await;
}

#[tokio::test]
async fn whole_replies_work_the_same() {
    remember_then_answer(false).await;
}

#[tokio::test]
async fn bad_arguments_go_back_to_the_model_as_errors() {
    let model = FakeModel::start().await;
    model.push(
        Reply::tool("echo", "{not json")
            .and_tool("echo", r#"{"text": 5}"#)
            .and_tool("no_such_tool", "{}")
            .and_tool("echo", r#"{"text":"fine"}"#)
            .with_id("call_1"),
    );
    model.push(Reply::text("ok"));
    let test = TestHost::with_plugins(&model, &plugin_block("misbehave", "")).await;
    let session = test.session();
    test.turn(&session, "go").await.unwrap();
    let second = &model.requests()[1];
    let results: Vec<(String, String)> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| (m["tool_call_id"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(results[0].1.contains("not valid JSON"), "{results:?}");
    assert!(
        results[1].1.contains("do not match its schema") && results[1].1.contains("/text"),
        "{results:?}"
    );
    assert!(
        results[2].1.contains("no tool named `no_such_tool`") && results[2].1.contains("echo"),
        "{results:?}"
    );
    assert_eq!(results[3].1, "fine");
    // The repeated id was made unique, so each call has its own result.
    let ids: std::collections::HashSet<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids.len(), 4);
}

#[tokio::test]
async fn the_iteration_cap_ends_a_turn_that_would_not_stop() {
    let model = FakeModel::start().await;
    for _ in 0..6 {
        model.push(Reply::tool("echo", r#"{"text":"again"}"#));
    }
    let test = TestHost::with_plugins(&model, &plugin_block("misbehave", "")).await;
    let session = test.session();
    let outcome = test.turn(&session, "loop").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::MaxIterations);
    assert_eq!(outcome.iterations, 6);
    assert_eq!(model.requests().len(), 6);
}

#[tokio::test]
async fn a_session_resumes_from_sqlite_in_a_new_host() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("remember", r#"{"key":"a","value":1}"#));
    model.push(Reply::text("noted"));
    model.push(Reply::tool("recall", "{}"));
    model.push(Reply::text("recalled"));
    let first = TestHost::with_plugins(&model, &plugin_block("misbehave", "")).await;
    let session = first.session();
    let id = session.lock().await.id().to_owned();
    first.turn(&session, "remember").await.unwrap();
    let config = std::fs::read_to_string(first.dir.path().join("config.toml")).unwrap();
    let dir = first.dir;
    drop(session);
    drop(first.host);

    // A second host on the same folder: same database.
    let path = dir.path().join("config.toml");
    std::fs::write(&path, config).unwrap();
    let config = agent_host::Config::load(&path).unwrap();
    let client = agent_host::model::ModelClient::from_config(&config).unwrap().unwrap();
    let host = agent_host::Host::new(config, client).await.unwrap();
    let session = host.sessions().open(&id).unwrap().expect("the session is in the store");
    let mut session = session.lock().await;
    assert!(session.was_resumed());
    assert_eq!(session.history().len(), 4);
    let events = agent_host::events::CollectEvents::default();
    host.run_turn(&mut session, "what do you remember?", &events, &agent_host::agent::NoOperator)
        .await
        .unwrap();
    let recall = model.requests()[3]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(recall["content"], r#"{"a":1}"#);
}
