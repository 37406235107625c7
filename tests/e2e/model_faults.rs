//! The model endpoint misbehaving: rate limits and server errors (retried, then a clear
//! error), a redirect (not followed: the error names where it points), a stream cut mid-reply, an event that is not JSON, a reply that never ends, an
//! empty reply, and a reply whose tool calls are broken (arguments that are not JSON, an
//! unknown tool, one id twice). In every case the session keeps what it had and the next
//! turn works.

use agent_host::model::Role;
use agent_host::state::{SessionStore, SqliteStore};
use agent_host::{Event, TurnEnd};
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, plugin_block, scripted_console};

async fn host(model: &FakeModel, timeout_secs: u64) -> TestHost {
    let config = config_text(&model.url(), &plugin_block("misbehave", ""))
        .replace("timeout_secs = 5", &format!("timeout_secs = {timeout_secs}"));
    TestHost::new(&config).await.unwrap()
}

/// Runs a turn expected to fail with `expected` in its error, then checks the session
/// still works and still holds the first prompt.
async fn fails_then_recovers(model: &FakeModel, test: &TestHost, expected: &str) {
    fails_then_recovers_sending(model, test, expected, &["first\n\nsecond\n\nmisbehave injected message"])
        .await;
}

/// As `fails_then_recovers`, for a failure after which the recovered turn's request carries
/// the user messages `sent`: a reply cut part-way keeps what streamed, so the two prompts
/// stay apart.
async fn fails_then_recovers_sending(
    model: &FakeModel,
    test: &TestHost,
    expected: &str,
    sent_users: &[&str],
) {
    let session = test.session();
    let error = test.turn(&session, "first").await.expect_err("the turn fails").to_string();
    assert!(error.contains(expected), "{error}");
    model.push(Reply::text("recovered"));
    let outcome = test.turn(&session, "second").await.unwrap();
    assert_eq!(outcome.reply, "recovered");
    let id = session.lock().await.id().to_owned();
    let stored = SqliteStore::open(&test.db_path()).unwrap().load(&id).unwrap().unwrap();
    let users: Vec<&str> =
        stored.history.iter().filter(|m| m.role == Role::User).map(|m| m.content.as_str()).collect();
    assert_eq!(users, ["first", "second"], "the failed turn's prompt is kept");
    let last = model.requests().last().unwrap().clone();
    let sent: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    // The unanswered prompt goes with the next as one user turn (strict chat templates refuse
    // two in a row), and the plugin's injected message rides on it (`injected_as = "user"`).
    assert_eq!(sent, sent_users, "and sent");
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() {
    let model = FakeModel::start().await;
    model.push(Reply::status(429)).push(Reply::status(503)).push(Reply::text("made it"));
    let test = host(&model, 5).await;
    let outcome = test.turn(&test.session(), "hi").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::Done);
    assert_eq!(outcome.reply, "made it");
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn retries_run_out_with_a_clear_error() {
    let model = FakeModel::start().await;
    model.push(Reply::status(500)).push(Reply::status(500)).push(Reply::status(500));
    let test = host(&model, 5).await;
    fails_then_recovers(&model, &test, "HTTP 500 after 3 attempt(s)").await;
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_the_error_says_where_it_points() {
    let model = FakeModel::start().await;
    model.push(Reply::redirect("https://models.example/v1/chat/completions"));
    let test = host(&model, 5).await;
    fails_then_recovers(&model, &test, "redirects to https://models.example/v1/chat/completions").await;
    assert_eq!(model.requests().len(), 2, "the redirect was neither followed nor retried");
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let model = FakeModel::start().await;
    model.push(Reply::status(400));
    let test = host(&model, 5).await;
    fails_then_recovers(&model, &test, "HTTP 400 after 1 attempt(s)").await;
}

#[tokio::test]
async fn a_rejected_key_names_the_variable_not_the_key() {
    let model = FakeModel::start().await;
    model.push(Reply::status(401));
    let test = host(&model, 5).await;
    fails_then_recovers(
        &model,
        &test,
        "rejected the API key (HTTP 401); check the variable `AGENT_HOST_TEST_KEY`",
    )
    .await;
}

#[tokio::test]
async fn a_stream_cut_mid_reply_is_an_error() {
    let model = FakeModel::start().await;
    model.push(Reply::cut("half a sent"));
    let test = host(&model, 5).await;
    let apart = ["first", "second\n\nmisbehave injected message"];
    fails_then_recovers_sending(&model, &test, "the stream ended before the reply was complete", &apart)
        .await;
}

#[tokio::test]
async fn a_stream_event_that_is_not_json_is_an_error() {
    let model = FakeModel::start().await;
    model.push(Reply::not_json());
    let test = host(&model, 5).await;
    fails_then_recovers(&model, &test, "a stream chunk is not JSON").await;
}

#[tokio::test]
async fn a_reply_that_never_ends_times_out() {
    let model = FakeModel::start().await;
    model.push(Reply::hang());
    let test = host(&model, 1).await;
    let apart = ["first", "second\n\nmisbehave injected message"];
    fails_then_recovers_sending(&model, &test, "the model did not finish within 1 s", &apart).await;
}

/// An empty reply (no text, no tool calls) is an empty final answer: the turn ends as
/// usual, the reply is kept in the history, and the next turn goes on from there.
#[tokio::test]
async fn an_empty_reply_is_an_empty_answer_and_the_session_continues() {
    let model = FakeModel::start().await;
    model.push(Reply::text(""));
    let test = host(&model, 5).await;
    let session = test.session();
    let outcome = test.turn(&session, "first").await.unwrap();
    assert_eq!((outcome.end, outcome.iterations, outcome.reply.as_str()), (TurnEnd::Done, 1, ""));
    let events = test.take_events();
    assert!(events.iter().any(|e| matches!(e, Event::AssistantMessage { text, tool_calls, .. } if text.is_empty() && tool_calls.is_empty())));
    assert!(!events.iter().any(|e| matches!(e, Event::Error { .. })), "{events:?}");

    model.push(Reply::text("second answer"));
    assert_eq!(test.turn(&session, "second").await.unwrap().reply, "second answer");
    let sent: Vec<(String, String)> = model.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| (m["role"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned()))
        .collect();
    let expected = [("user", "first"), ("assistant", ""), ("user", "second\n\nmisbehave injected message")];
    assert_eq!(sent, expected.map(|(role, text)| (role.to_owned(), text.to_owned())));
    let id = session.lock().await.id().to_owned();
    let stored = SqliteStore::open(&test.db_path()).unwrap().load(&id).unwrap().unwrap();
    assert_eq!(stored.history.len(), 4, "both turns, the empty answer included, are stored");
}

#[test]
fn the_console_says_when_the_reply_was_empty() {
    let stdout = scripted_console("[[turn]]\ntext = \"\"\n", &plugin_block("misbehave", ""), "hello\n");
    assert!(stdout.contains("(the model sent an empty reply)"), "{stdout}");
}

/// Broken tool calls are each answered with an error the model can act on, a repeated id
/// gets its own result, every call that can run runs once, and the next turn works.
#[tokio::test]
async fn broken_tool_calls_are_answered_and_the_session_continues() {
    let model = FakeModel::start().await;
    model.push(
        Reply::tool("remember", "{\"key\": \"a\", ")
            .and_tool("forget_everything", "{}")
            .and_tool("remember", r#"{"key":"b","value":1}"#)
            .with_id("dup")
            .and_tool("remember", r#"{"key":"c","value":2}"#)
            .with_id("dup"),
    );
    model.push(Reply::text("handled"));
    let test = host(&model, 5).await;
    let session = test.session();
    assert_eq!(test.turn(&session, "go").await.unwrap().reply, "handled");

    let id = session.lock().await.id().to_owned();
    let stored = SqliteStore::open(&test.db_path()).unwrap().load(&id).unwrap().unwrap();
    let results: Vec<(&str, &str)> = stored
        .history
        .iter()
        .filter_map(|m| Some((m.tool_call_id.as_deref()?, m.content.as_str())))
        .collect();
    assert_eq!(results.len(), 4, "one result per call: {results:?}");
    assert!(results[0].1.contains("the arguments for `remember` are not valid JSON"), "{results:?}");
    assert!(results[1].1.contains("there is no tool named `forget_everything`"), "{results:?}");
    assert_eq!(results[2], ("dup", "1 values remembered"));
    assert_ne!(results[3].0, "dup", "the repeated id was made unique");
    assert_eq!(results[3].1, "2 values remembered");
    let memory = stored.state.iter().find(|(ns, key, _)| ns == "misbehave" && key == "memory").unwrap();
    assert_eq!(serde_json::from_str::<Value>(&memory.2).unwrap(), json!({"b": 1, "c": 2}));

    model.push(Reply::tool("recall", "{}")).push(Reply::text("still here"));
    assert_eq!(test.turn(&session, "again").await.unwrap().reply, "still here");
}

#[tokio::test]
async fn the_api_key_is_sent_as_a_bearer_token() {
    let model = FakeModel::start().await;
    model.push(Reply::text("ok"));
    // SAFETY of the environment: only this test sets this variable, before the host reads it.
    let config = config_text(&model.url(), &plugin_block("misbehave", ""))
        .replace("AGENT_HOST_TEST_KEY", "AGENT_HOST_TEST_KEY_BEARER");
    unsafe_set_env("AGENT_HOST_TEST_KEY_BEARER", "sk-fake-bearer");
    let test = TestHost::new(&config).await.unwrap();
    test.turn(&test.session(), "hi").await.unwrap();
    assert_eq!(model.authorizations(), [Some("Bearer sk-fake-bearer".to_owned())]);
}

#[allow(unsafe_code)]
fn unsafe_set_env(name: &str, value: &str) {
    // SAFETY: the variable is unique to one test and read on the same thread right after;
    // no other thread reads or writes it.
    unsafe { std::env::set_var(name, value) }
}

/// A turn the model fails in its second call reports both calls at its end, after the error.
#[tokio::test]
async fn a_failed_turn_ends_with_the_model_calls_it_made() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("echo", r#"{"text":"one"}"#)).push(Reply::status(400));
    let test = host(&model, 5).await;
    test.turn(&test.session(), "go").await.expect_err("the second call fails");
    let events = test.take_events();
    let ends: Vec<(TurnEnd, u32)> = events
        .iter()
        .filter_map(|e| match e {
            Event::TurnEnded { reason, iterations, .. } => Some((*reason, *iterations)),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [(TurnEnd::Error, 2)]);
    assert!(matches!(events[events.len() - 2], Event::Error { .. }), "the error comes just before");
}
