//! OpenAI-compatible servers as they really answer: each stream shape a real server sends
//! (`tests/fixtures/openai/`, named after the server) replayed through the fake endpoint into
//! the real host, and requests checked the way strict servers check them (llama.cpp's chat
//! templates, Mistral's ids). Also: where injected messages go, what the request carries
//! (`max_tokens`, `stream_options`, `extra_body`), parameters a server refuses, context-length
//! refusals, and the waits (first byte, idle, dropped connections).

use agent_host::agent::TurnError;
use agent_host::model::ModelError;
use agent_host::state::{SessionStore, SqliteStore, StoredSession};
use serde_json::{Value, json};

use crate::support::{Check, FakeModel, Reply, TestHost, config_text, plugin_block, repo_root};

/// A fixture's body as the server sent it: the file without its leading `: source:` lines.
fn fixture(name: &str) -> String {
    let path = repo_root().join("tests/fixtures/openai").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut rest = text.as_str();
    while let Some(line_end) = rest.strip_prefix(": ").and_then(|_| rest.find('\n')) {
        rest = &rest[line_end + 1..];
    }
    rest.trim_start_matches(['\r', '\n']).to_owned()
}

/// A host with the todo plugin (its completion loop off: these turns end when the model
/// stops) and `[model]` lines added.
async fn host(model: &FakeModel, model_lines: &str) -> TestHost {
    let config = config_text(&model.url(), &plugin_block("todo", "[plugin.config.loop]\nenabled = false\n"))
        .replace("timeout_secs = 5\n", &format!("timeout_secs = 5\n{model_lines}\n"));
    TestHost::new(&config).await.expect("the test host starts")
}

fn messages(request: &Value) -> &Vec<Value> {
    request["messages"].as_array().expect("every request has messages")
}

fn stored(test: &TestHost, id: &str) -> StoredSession {
    SqliteStore::open(&test.db_path()).unwrap().load(id).unwrap().unwrap()
}

/// The model error a failed turn ended with.
fn model_error(error: &anyhow::Error) -> &ModelError {
    match error.downcast_ref::<TurnError>() {
        Some(TurnError::Model(error)) => error,
        _ => panic!("not a model error: {error:#}"),
    }
}

async fn add_todo(test: &TestHost, session: &agent_host::agent::SessionHandle, title: &str) {
    let mut session = session.lock().await;
    let args = json!({"todos": [{"title": title}]});
    let result = test.host.invoke_tool(&mut session, "todos_add", &args, &*test.events).await.unwrap();
    assert!(result.ok, "{}", result.output);
}

// --- Where injected messages go -------------------------------------------------------

#[tokio::test]
async fn injected_messages_reach_a_strict_template_as_one_user_message() {
    let model = FakeModel::start().await;
    model.check(Check::SystemFirst);
    model.push(Reply::tool("todos_get_all", "{}")).push(Reply::text("listed"));
    let test = host(&model, "").await;
    let session = test.session();
    add_todo(&test, &session, "Write the tests").await;
    assert_eq!(test.turn(&session, "what is left?").await.unwrap().reply, "listed");

    let requests = model.requests();
    let roles = |request: &Value| {
        messages(request).iter().map(|m| m["role"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(roles(&requests[0]), ["system", "user"], "one user turn, nothing after it");
    assert_eq!(
        messages(&requests[0])[1]["content"],
        "what is left?\n\n### Current todo list\n- 1 [open] Write the tests"
    );
    assert_eq!(roles(&requests[1]), ["system", "user", "assistant", "tool", "user"]);
    assert_eq!(messages(&requests[1])[1]["content"], "what is left?", "the stored turn is sent as it is");
    assert_eq!(messages(&requests[1])[4]["content"], "### Current todo list\n- 1 [open] Write the tests");
    let id = session.lock().await.id().to_owned();
    let kept = stored(&test, &id);
    assert_eq!(kept.history[0].content, "what is left?", "injected text is never stored");
}

#[tokio::test]
async fn injected_messages_can_join_the_first_system_message_or_stay_system() {
    let model = FakeModel::start().await;
    model.check(Check::SystemFirst);
    model.push(Reply::text("ok"));
    let test = host(&model, "injected_as = \"first-system\"").await;
    let session = test.session();
    add_todo(&test, &session, "a").await;
    test.turn(&session, "go").await.unwrap();
    let sent = messages(&model.requests()[0]).clone();
    assert_eq!(sent.len(), 2);
    let system = sent[0]["content"].as_str().unwrap();
    assert!(system.ends_with("\n\n### Current todo list\n- 1 [open] a"), "{system}");
    assert_eq!(sent[1]["content"], "go");

    // As `system` after the history (the old way), a strict template refuses every call.
    let model = FakeModel::start().await;
    model.check(Check::SystemFirst);
    let test = host(&model, "injected_as = \"system\"").await;
    let error = test.turn(&test.session(), "go").await.unwrap_err().to_string();
    assert!(error.contains("System message must be at the beginning."), "{error}");
}

// --- Tool calls a server sends, and what goes back -----------------------------------

/// llama.cpp cut at `max_tokens` inside a tool call's arguments: the stored call keeps what
/// the model wrote, and no later request carries it in a form the server refuses.
#[tokio::test]
async fn a_reply_cut_mid_arguments_never_poisons_the_session() {
    let model = FakeModel::start().await;
    model.check(Check::ArgumentsParse);
    model.push(Reply::raw(&fixture("llama.cpp-length-mid-arguments.sse")));
    model.fallback(Reply::text("ok"));
    let test = host(&model, "").await;
    let session = test.session();
    test.turn(&session, "plan it").await.unwrap();
    test.turn(&session, "and now?").await.unwrap();

    let id = session.lock().await.id().to_owned();
    let kept = stored(&test, &id);
    let call = kept.history.iter().flat_map(|m| &m.tool_calls).find(|c| c.name == "todos_add").unwrap();
    assert_eq!(call.arguments, r#"{"todos": [{"title": "Wri"#, "the history keeps the cut text");
    let requests = model.requests();
    assert!(requests.len() >= 2, "{requests:?}");
    for request in &requests[1..] {
        let sent = messages(request)
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .flatten()
            .find(|c| c["id"] == call.id.as_str())
            .expect("the cut call is in every later request");
        assert_eq!(sent["function"]["arguments"], "{}");
    }
}

#[tokio::test]
async fn ids_the_host_invents_satisfy_mistral_templates() {
    let model = FakeModel::start().await;
    model.check(Check::MistralIds).check(Check::ArgumentsParse);
    model.push(
        Reply::tool("todos_get_all", "{}").with_id("").and_tool("todos_get_remaining", "{}").with_id(""),
    );
    model.push(Reply::text("done"));
    let test = host(&model, "").await;
    let session = test.session();
    assert_eq!(test.turn(&session, "go").await.unwrap().reply, "done");
    let id = session.lock().await.id().to_owned();
    let ids: Vec<String> =
        stored(&test, &id).history.iter().flat_map(|m| &m.tool_calls).map(|c| c.id.clone()).collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    for id in &ids {
        assert!(id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()), "{id}");
    }
}

/// The todo the replayed call added, read back from the plugin's state.
async fn added_titles(session: &agent_host::agent::SessionHandle) -> Value {
    let items = session.lock().await.bag().get_json("todo", "items").unwrap_or(Value::Null);
    items.as_array().map(|items| items.iter().map(|item| item["title"].clone()).collect()).unwrap_or_default()
}

/// The tool calls of the assistant message in the second request (the replayed reply).
fn sent_back_calls(model: &FakeModel) -> Vec<(String, String)> {
    let requests = model.requests();
    messages(&requests[1])
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .map(|c| (c["id"].as_str().unwrap().to_owned(), c["function"]["name"].as_str().unwrap().to_owned()))
        .collect()
}

#[tokio::test]
async fn an_id_and_a_name_repeated_on_every_delta_are_one_value() {
    for (fixture_name, id) in [
        ("deepseek-repeated-id.sse", "call_0_8f7c1e62-0c59-4c61-a7a6-3c1d2a0f9b54"),
        ("dashscope-repeated-id-and-name.sse", "call_5b1f0c2e9a3d4e7f8a6b2c1d"),
    ] {
        let model = FakeModel::start().await;
        model.push(Reply::raw(&fixture(fixture_name))).push(Reply::text("added"));
        let test = host(&model, "").await;
        let session = test.session();
        assert_eq!(test.turn(&session, "add it").await.unwrap().reply, "added", "{fixture_name}");
        assert_eq!(added_titles(&session).await, json!(["Write the tests"]), "{fixture_name}");
        assert_eq!(sent_back_calls(&model), [(id.to_owned(), "todos_add".to_owned())], "{fixture_name}");
    }
}

#[tokio::test]
async fn fragments_without_an_index_continue_their_call() {
    let model = FakeModel::start().await;
    model.push(Reply::raw(&fixture("gemini-no-index.sse"))).push(Reply::text("added"));
    let test = host(&model, "").await;
    let session = test.session();
    assert_eq!(test.turn(&session, "add it").await.unwrap().reply, "added");
    assert_eq!(added_titles(&session).await, json!(["Write the tests"]));
    let expected = [("function-call-1", "todos_add"), ("function-call-2", "todos_get_all")];
    assert_eq!(sent_back_calls(&model), expected.map(|(id, name)| (id.to_owned(), name.to_owned())));
    let results: Vec<Value> =
        messages(&model.requests()[1]).iter().filter(|m| m["role"] == "tool").cloned().collect();
    assert_eq!(results.len(), 2, "{results:?}");
}

#[tokio::test]
async fn arguments_sent_as_a_json_object_are_taken_as_its_text() {
    let streamed = Reply::raw(&fixture("llama.cpp-arguments-object.sse"));
    let whole = Reply::raw(&fixture("tgi-whole-arguments-object.json")).content_type("application/json");
    for (reply, what) in [(streamed, "streamed"), (whole, "whole")] {
        let model = FakeModel::start().await;
        model.check(Check::ArgumentsParse);
        model.push(reply).push(Reply::text("added"));
        let test = host(&model, "").await;
        let session = test.session();
        assert_eq!(test.turn(&session, "add it").await.unwrap().reply, "added", "{what}");
        assert_eq!(added_titles(&session).await, json!(["Write the tests"]), "{what}");
        let call =
            messages(&model.requests()[1]).iter().find_map(|m| m["tool_calls"].get(0).cloned()).unwrap();
        let arguments: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(arguments, json!({"todos": [{"title": "Write the tests"}]}), "{what}");
    }
}

/// The model's shown reasoning is kept in the reply, never sent back to the server.
#[tokio::test]
async fn reasoning_is_never_sent_back() {
    let model = FakeModel::start().await;
    let stream = [
        json!({"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"The user wants a list; call"}}]}),
        json!({"choices":[{"index":0,"delta":{"reasoning_content":" the tool SECRET-THOUGHT."}}]}),
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"todos_get_all","arguments":"{}"}}]}}]}),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
    ];
    let body: String =
        stream.iter().map(|chunk| format!("data: {chunk}\n\n")).collect::<String>() + "data: [DONE]\n\n";
    model.push(Reply::raw(&body)).push(Reply::text("none"));
    let test = host(&model, "").await;
    test.turn(&test.session(), "list").await.unwrap();
    let second = model.requests()[1].to_string();
    assert!(!second.contains("SECRET-THOUGHT") && !second.contains("reasoning_content"), "{second}");
}

// --- Chunks and bodies in other shapes -------------------------------------------------

#[tokio::test]
async fn choices_null_and_data_null_chunks_are_skipped() {
    for (name, text) in
        [("minimax-choices-null.sse", "All three todos are done."), ("proxy-data-null.sse", "Still here.")]
    {
        let model = FakeModel::start().await;
        model.push(Reply::raw(&fixture(name)));
        let test = host(&model, "").await;
        assert_eq!(test.turn(&test.session(), "status?").await.unwrap().reply, text, "{name}");
    }
}

#[tokio::test]
async fn an_event_stream_under_another_content_type_is_read_as_one() {
    for content_type in ["text/plain; charset=utf-8", "application/octet-stream", "application/json"] {
        let model = FakeModel::start().await;
        model.push(Reply::raw(&fixture("plain-content-type.sse")).content_type(content_type));
        let test = host(&model, "").await;
        let outcome = test.turn(&test.session(), "hi").await.unwrap();
        assert_eq!(outcome.reply, "Read as events.", "{content_type}");
    }
}

#[tokio::test]
async fn a_reply_cut_at_its_length_without_done_is_complete() {
    let model = FakeModel::start().await;
    model.push(Reply::raw(&fixture("llama.cpp-length-no-done.sse")));
    let test = host(&model, "").await;
    let outcome = test.turn(&test.session(), "plan").await.unwrap();
    assert_eq!(outcome.reply, "The plan has three steps: first");
    assert_eq!(model.requests().len(), 1, "not retried: the reply was complete");
}

#[tokio::test]
async fn a_long_error_body_is_kept_up_to_two_thousand_bytes() {
    let model = FakeModel::start().await;
    let long = format!("{{\"error\":{{\"message\":\"{}END\"}}}}", "template trace line. ".repeat(120));
    model.push(Reply::status_body(422, &long));
    let test = host(&model, "").await;
    let error = test.turn(&test.session(), "hi").await.unwrap_err().to_string();
    assert!(error.contains(&"template trace line. ".repeat(40)), "{error}");
    assert!(!error.contains("END"), "cut at the bound");
}

// --- What the request carries, and parameters a server refuses ------------------------

#[tokio::test]
async fn max_output_tokens_usage_and_extra_body_are_sent() {
    let model = FakeModel::start().await;
    model.push(Reply::text("ok"));
    let lines =
        "max_output_tokens = 256\ntemperature = 0.2\n[model.extra_body]\ntop_k = 20\ntemperature = 0.7";
    let test = host(&model, lines).await;
    test.turn(&test.session(), "hi").await.unwrap();
    let request = &model.requests()[0];
    assert_eq!(request["max_tokens"], 256);
    assert_eq!(request["stream_options"], json!({"include_usage": true}));
    assert_eq!(request["top_k"], 20);
    assert_eq!(request["temperature"], 0.7, "extra_body's value replaces the host's");
}

#[tokio::test]
async fn a_parameter_the_server_refuses_is_dropped_once_and_for_good() {
    for (name, param) in [
        ("openai-unsupported-max-tokens.json", "max_tokens"),
        ("fastapi-extra-forbidden-stream-options.json", "stream_options"),
    ] {
        let model = FakeModel::start().await;
        model
            .push(Reply::status_body(400, &fixture(name)))
            .push(Reply::text("first"))
            .push(Reply::text("second"));
        let test = host(&model, "max_output_tokens = 256").await;
        let session = test.session();
        assert_eq!(test.turn(&session, "hi").await.unwrap().reply, "first", "{name}");
        assert_eq!(test.turn(&session, "again").await.unwrap().reply, "second", "{name}");
        let requests = model.requests();
        assert_eq!(requests.len(), 3, "{name}: one extra request, not a retry loop");
        assert!(requests[0].get(param).is_some(), "{name}");
        assert!(requests[1].get(param).is_none() && requests[2].get(param).is_none(), "{name}: remembered");
        let other = if param == "max_tokens" { "stream_options" } else { "max_tokens" };
        assert!(requests[2].get(other).is_some(), "{name}: only the refused one is dropped");
    }
}

#[tokio::test]
async fn a_context_length_refusal_is_recognised_and_not_retried() {
    for name in [
        "openai-context-length.json",
        "llama.cpp-context-size.json",
        "vllm-context-length.json",
        "vllm-max-tokens-too-large.json",
        "litellm-context-window.json",
    ] {
        let model = FakeModel::start().await;
        model.push(Reply::status_body(400, &fixture(name))).fallback(Reply::text("should not be asked"));
        let test = host(&model, "max_output_tokens = 256").await;
        let error = test.turn(&test.session(), "a very long prompt").await.unwrap_err();
        assert!(
            matches!(model_error(&error), ModelError::ContextTooLong { status: 400, .. }),
            "{name}: {error}"
        );
        assert_eq!(model.requests().len(), 1, "{name}: neither retried nor resent without a parameter");
    }
}

// --- Waits and broken connections -----------------------------------------------------

#[tokio::test]
async fn an_endpoint_that_never_answers_fails_at_the_first_byte_wait() {
    let model = FakeModel::start().await;
    model.push(Reply::silent());
    let test = host(&model, "first_byte_timeout_secs = 1").await;
    let error = test.turn(&test.session(), "hi").await.unwrap_err().to_string();
    assert!(error.contains("`first_byte_timeout_secs`"), "{error}");
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn a_reply_that_goes_quiet_is_cut_and_keeps_what_streamed() {
    let model = FakeModel::start().await;
    model.push(Reply::hang());
    let test = host(&model, "idle_timeout_secs = 1").await;
    let error = test.turn(&test.session(), "hi").await.unwrap_err();
    match model_error(&error) {
        ModelError::Cut { detail, partial } => {
            assert!(detail.contains("`idle_timeout_secs`"), "{detail}");
            assert_eq!(partial.text, "…");
        }
        other => panic!("not a cut: {other}"),
    }
}

#[tokio::test]
async fn a_connection_dropped_before_any_text_is_retried() {
    let model = FakeModel::start().await;
    model.push(Reply::dropped("")).push(Reply::text("made it"));
    let test = host(&model, "").await;
    assert_eq!(test.turn(&test.session(), "hi").await.unwrap().reply, "made it");
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_connection_dropped_after_text_is_cut_with_the_text() {
    let model = FakeModel::start().await;
    model.push(Reply::dropped("half a sen")).fallback(Reply::text("not asked again"));
    let test = host(&model, "").await;
    let error = test.turn(&test.session(), "hi").await.unwrap_err();
    match model_error(&error) {
        ModelError::Cut { partial, .. } => assert_eq!(partial.text, "half a sen"),
        other => panic!("not a cut: {other}"),
    }
    assert_eq!(model.requests().len(), 1, "what was shown is not asked for again");
}
