//! Replies captured from a real llama.cpp `llama-server` (tests/fixtures/llama-server/, made by
//! scripts/llama-server/capture-fixtures.sh; each file's first line names the server, its
//! version, the chat template and the request), served byte for byte from a loopback server to
//! the real host: what the host makes of a plain streamed reply, the usage chunk, a reply cut at
//! `max_tokens`, a tool call, and the error a strict template raises.

use agent_host::conversation::{History, Message, Role};
use agent_host::events::TokenUsage;
use agent_host::model::{HistoryEncodings, ModelClient, ModelRequest, StopReason};
use agent_host::state::{SessionStore, SqliteStore};
use agent_host::tools::ToolCall;
use agent_host::{Config, Event, TurnEnd};

use crate::support::{FakeModel, Reply, TestHost, config_text, plugin_block, repo_root};

/// A captured body as the server sent it, its `: source:` line included (SSE readers skip
/// comments, as the host must).
fn captured(name: &str) -> String {
    let path = repo_root().join("tests/fixtures/llama-server").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A captured error body without its `: source:` line, which is not part of the JSON.
fn captured_json(name: &str) -> String {
    let text = captured(name);
    let (source, body) = text.split_once('\n').expect("a source line, then the body");
    assert!(source.starts_with(": source: llama-server"), "{source}");
    body.to_owned()
}

fn streamed(name: &str) -> Reply {
    Reply::raw(&captured(name))
}

/// The model client the host builds for a deployment on `model`.
fn client(model: &FakeModel) -> (tempfile::TempDir, ModelClient) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, config_text(&model.url(), "")).unwrap();
    let config = Config::load(&path).unwrap();
    (dir, ModelClient::from_config(&config).unwrap().expect("the config names an endpoint"))
}

/// One model call through the host's client, as the loop makes it.
async fn one_call(model: &FakeModel) -> (agent_host::model::ModelReply, Vec<String>) {
    let (_dir, client) = client(model);
    let history = History::from(vec![Message::user("hi")]);
    let request = ModelRequest {
        session_id: "s",
        system: "be brief",
        history: &history,
        injected: &[],
        tools: &[],
        max_output_tokens: None,
        model: None,
    };
    let mut deltas = Vec::new();
    let reply = client
        .complete(&request, &mut HistoryEncodings::default(), &mut |text| deltas.push(text.to_owned()))
        .await
        .expect("the captured reply is read");
    (reply, deltas)
}

fn assistant_texts(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::AssistantMessage { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_streamed_text_reply_is_the_turn_s_answer_and_is_stored() {
    let model = FakeModel::start().await;
    model.push(streamed("text.sse"));
    let test = TestHost::with_plugins(&model, "").await;
    let session = test.session();
    let outcome = test.turn(&session, "Say hello to the sea in one short sentence.").await.unwrap();

    let said = "The sea is a beautiful and mysterious place, full of wonders and mysteries.";
    assert_eq!((outcome.end, outcome.iterations, outcome.reply.as_str()), (TurnEnd::Done, 1, said));
    let events = test.take_events();
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            Event::AssistantDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.len(), 15, "one delta per token the server streamed: {deltas:?}");
    assert_eq!(deltas.concat(), said);
    assert_eq!(assistant_texts(&events), [said]);

    let id = session.lock().await.id().to_owned();
    let stored = SqliteStore::open(&test.db_path()).unwrap().load(&id).unwrap().unwrap();
    let history: Vec<(Role, &str)> = stored.history.iter().map(|m| (m.role, m.content.as_str())).collect();
    assert_eq!(
        history,
        [(Role::User, "Say hello to the sea in one short sentence."), (Role::Assistant, said)]
    );
}

#[tokio::test]
async fn the_usage_chunk_is_read_as_the_server_counted() {
    let model = FakeModel::start().await;
    model.push(streamed("usage.sse"));
    let (reply, _) = one_call(&model).await;
    assert_eq!(reply.text, "There are no three colours in the world.");
    assert_eq!(reply.stop, StopReason::Done);
    let usage =
        TokenUsage { input_tokens: 24, output_tokens: 10, cache_read_tokens: 14, cache_write_tokens: 0 };
    assert_eq!(reply.usage, Some(usage));

    model.push(streamed("text.sse"));
    let (reply, _) = one_call(&model).await;
    assert_eq!(reply.usage, None, "without the usage chunk the server reports none");
}

#[tokio::test]
async fn a_reply_cut_at_max_tokens_is_reported_as_length_and_its_text_kept() {
    let model = FakeModel::start().await;
    model.push(streamed("length-cut-text.sse"));
    let (reply, deltas) = one_call(&model).await;
    assert_eq!(reply.stop, StopReason::Length);
    assert_eq!(reply.text, "The sea is a timeless and");
    assert_eq!(deltas.concat(), reply.text, "what streamed is what was kept");

    model.push(streamed("length-cut-text.sse"));
    let test = TestHost::with_plugins(&model, "").await;
    let session = test.session();
    test.turn(&session, "Tell me a long story about the sea.").await.unwrap();
    let id = session.lock().await.id().to_owned();
    let stored = SqliteStore::open(&test.db_path()).unwrap().load(&id).unwrap().unwrap();
    assert_eq!(stored.history.last().map(|m| m.content.as_str()), Some("The sea is a timeless and"));
}

#[tokio::test]
async fn a_strict_template_s_refusal_reaches_the_operator_in_the_server_s_words() {
    let model = FakeModel::start().await;
    let refusal = captured_json("qwen3.5-system-after-user.json");
    model.fallback(Reply::status_body(500, &refusal));
    let test = TestHost::with_plugins(&model, "").await;
    let error =
        test.turn(&test.session(), "hi").await.expect_err("the server refuses every call").to_string();
    assert!(error.contains("HTTP 500 after 3 attempt(s)"), "{error}");
    // The template's own words, as the server quotes them ahead of its exception line.
    assert!(error.contains("raise_exception('System message must be at the beginnin"), "{error}");
    assert_eq!(model.requests().len(), 3, "a 500 is retried, twice in the test config");
}

/// The todo plugin, without the completion loop that would send the model back to an open item.
fn todo_without_loop() -> String {
    plugin_block("todo", "[plugin.config.loop]\nenabled = false")
}

/// The `todos_add` arguments llama-server streamed (in the Functionary v3.2 syntax, parsed by
/// the server), and the id it gave the call.
const CALL_ID: &str = "qPFhbGXfrBkjQXTzdJxwoTpVDwlKTTUe";

#[tokio::test]
async fn a_streamed_tool_call_runs_the_tool_with_its_parsed_arguments() {
    let model = FakeModel::start().await;
    model.push(streamed("tool-call.sse")).push(streamed("text.sse"));
    let test = TestHost::with_plugins(&model, &todo_without_loop()).await;
    let session = test.session();
    let outcome = test.turn(&session, "Add one todo: title \"buy milk\", no description.").await.unwrap();
    assert_eq!((outcome.end, outcome.iterations), (TurnEnd::Done, 2));

    let events = test.take_events();
    let calls: Vec<(&str, &str, &serde_json::Value)> = events
        .iter()
        .filter_map(|event| match event {
            Event::ToolCall { id, name, arguments, .. } => Some((id.as_str(), name.as_str(), arguments)),
            _ => None,
        })
        .collect();
    let arguments = serde_json::json!({"todos": [{"title": "buy milk"}]});
    assert_eq!(calls, [(CALL_ID, "todos_add", &arguments)]);
    let items = session.lock().await.bag().get_json("todo", "items");
    assert_eq!(items, Some(serde_json::json!([{"id": 1, "title": "buy milk", "isComplete": false}])));

    // The next call sends the call back under the server's id, answered under the same id.
    let second = &model.requests()[1]["messages"];
    let sent_call = second.as_array().unwrap().iter().find(|m| m["tool_calls"].is_array()).unwrap();
    assert_eq!(sent_call["tool_calls"][0]["id"], CALL_ID);
    assert_eq!(sent_call["tool_calls"][0]["function"]["name"], "todos_add");
    let result = second.as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(result["tool_call_id"], CALL_ID);
}

#[tokio::test]
async fn a_tool_call_cut_at_max_tokens_is_reported_as_length_and_never_run() {
    let model = FakeModel::start().await;
    model.push(streamed("length-cut-tool-call.sse"));
    let (_dir, client) = client(&model);
    let history = History::from(vec![Message::user("hi")]);
    let request = ModelRequest::of_history("s", &history);
    let reply = client.complete(&request, &mut HistoryEncodings::default(), &mut |_| {}).await.unwrap();
    assert_eq!(reply.stop, StopReason::Length);
    let cut = ToolCall {
        id: "cIVoF7CnC28KdP8wjH5qTPCpDPG7yMdY".into(),
        name: "todos_add".into(),
        arguments: "{\n    \"todos\": [\n        {\n            \"title\":".into(),
    };
    assert_eq!(reply.tool_calls, [cut]);

    model.push(streamed("length-cut-tool-call.sse")).push(streamed("text.sse"));
    let test = TestHost::with_plugins(&model, &todo_without_loop()).await;
    let session = test.session();
    test.turn(&session, "Add one todo: title \"buy milk\", no description.").await.unwrap();
    let events = test.take_events();
    assert!(
        !events.iter().any(|e| matches!(e, Event::ToolCall { .. })),
        "the cut call did not run: {events:?}"
    );
    let answered = events.iter().any(
        |e| matches!(e, Event::ToolResult { id, ok: false, .. } if id == "cIVoF7CnC28KdP8wjH5qTPCpDPG7yMdY"),
    );
    assert!(answered, "the cut call is answered with an error: {events:?}");
    assert_eq!(session.lock().await.bag().get_json("todo", "items"), None, "nothing was added");
}
