//! How a reply ended and what it cost, as real endpoints report it: a reply cut at the
//! output limit (`finish_reason: "length"`) runs none of its tool calls and tells the model
//! why; a final reply cut so ends the turn `reply_cut` (exit status 5); usage is streamed,
//! shown, stored beside its reply and added up in `/session`; reasoning is shown apart and
//! never stored; the ids the host gives calls are unique in the session.

use std::process::Output;

use agent_host::state::{SessionStore, SqliteStore};
use agent_host::{Event, TurnEnd};
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, plugin_block};

/// The test deployment with `[model] max_output_tokens = 64` and the misbehave plugin.
fn config(model: &FakeModel) -> String {
    config_text(&model.url(), &plugin_block("misbehave", ""))
        .replace("model = \"fake\"\n", "model = \"fake\"\nmax_output_tokens = 64\n")
}

fn memory(stored: &agent_host::state::StoredSession) -> Option<Value> {
    let (_, _, json) = stored.state.iter().find(|(ns, key, _)| ns == "misbehave" && key == "memory")?;
    serde_json::from_str(json).ok()
}

async fn stored(
    test: &TestHost,
    session: &agent_host::agent::SessionHandle,
) -> agent_host::state::StoredSession {
    let id = session.lock().await.id().to_owned();
    SqliteStore::open(&test.db_path()).unwrap().load(&id).unwrap().unwrap()
}

#[tokio::test]
async fn a_reply_cut_at_the_output_limit_runs_none_of_its_calls_and_the_model_retries_smaller() {
    let model = FakeModel::start().await;
    // Cut mid-arguments, as llama.cpp and vLLM send it at `max_tokens`.
    model.push(
        Reply::tool("remember", r#"{"key":"a","value":1}"#)
            .and_tool("remember", r#"{"key":"b","val"#)
            .finish_reason("length"),
    );
    model.push(Reply::tool("remember", r#"{"key":"a","value":1}"#));
    model.push(Reply::text("stored"));
    let test = TestHost::new(&config(&model)).await.unwrap();
    let session = test.session();
    let outcome = test.turn(&session, "remember a and b").await.unwrap();
    assert_eq!((outcome.end, outcome.iterations, outcome.reply.as_str()), (TurnEnd::Done, 3, "stored"));

    let events = test.take_events();
    let stops: Vec<Value> = events
        .iter()
        .filter(|e| matches!(e, Event::AssistantMessage { .. }))
        .map(|e| serde_json::to_value(e).unwrap()["stop"].clone())
        .collect();
    assert_eq!(stops, [json!("length"), json!("tool_calls"), json!("done")]);
    let ran = events.iter().filter(|e| matches!(e, Event::ToolCall { .. })).count();
    assert_eq!(ran, 1, "only the retried call ran, not the complete call of the cut reply");
    let refused: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { ok: false, output, .. } => Some(output.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 2, "each call of the cut reply is answered: {refused:?}");
    for answer in &refused {
        assert!(answer.contains("cut off at the output limit of 64 tokens"), "{answer}");
        assert!(answer.contains("Retry with smaller steps"), "{answer}");
    }

    // What the model read next: both refusals, after its own cut reply.
    let second = model.requests()[1]["messages"].as_array().unwrap().clone();
    let results: Vec<&Value> = second.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|m| m["content"].as_str().unwrap().starts_with("This call was not run")));

    let stored = stored(&test, &session).await;
    assert_eq!(memory(&stored), Some(json!({"a": 1})), "only the retry changed anything");
    assert_eq!(stored.history.len(), 7, "prompt, cut reply, 2 refusals, retry, its result, answer");
}

#[tokio::test]
async fn a_final_reply_cut_at_the_output_limit_ends_the_turn_as_cut() {
    let model = FakeModel::start().await;
    model.push(Reply::text("The plan has three par").finish_reason("length"));
    let test = TestHost::new(&config(&model)).await.unwrap();
    let session = test.session();
    let outcome = test.turn(&session, "plan").await.unwrap();
    assert_eq!((outcome.end, outcome.reply.as_str()), (TurnEnd::ReplyCut, "The plan has three par"));
    let ends: Vec<TurnEnd> = test
        .take_events()
        .iter()
        .filter_map(|e| match e {
            Event::TurnEnded { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [TurnEnd::ReplyCut]);
    let stored = stored(&test, &session).await;
    assert_eq!(stored.history.last().unwrap().content, "The plan has three par", "the text is kept");
}

/// `--prompt go` against `model`, on the deployment in `dir`: the run's output.
async fn prompt(model: &FakeModel, dir: &tempfile::TempDir, extra: &[&str]) -> Output {
    std::fs::write(dir.path().join("config.toml"), config(model)).unwrap();
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .args(["--prompt", "go"])
        .args(extra)
        .output()
        .await
        .unwrap()
}

fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[tokio::test]
async fn a_cut_final_reply_exits_5_with_a_warning_on_the_console_and_the_reason_in_the_stream() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    model.push(Reply::text("Half an ans").finish_reason("length"));
    let console = prompt(&model, &dir, &[]).await;
    let stdout = String::from_utf8_lossy(&console.stdout);
    assert_eq!(console.status.code(), Some(5), "{stdout}");
    assert!(stdout.contains("⚠ the reply was cut at the output limit: its text is incomplete"), "{stdout}");
    assert!(stdout.contains("(stopped: the last reply is incomplete"), "{stdout}");

    model.push(Reply::text("Half an ans").finish_reason("length"));
    let streamed = prompt(&model, &dir, &["--json"]).await;
    assert_eq!(streamed.status.code(), Some(5));
    let events = json_lines(&streamed);
    let reply = events.iter().find(|e| e["type"] == "assistant_message").unwrap();
    assert_eq!(reply["stop"], "length");
    assert_eq!(events.last().unwrap()["reason"], "reply_cut");

    // A reply that ends by itself exits 0, as ever.
    model.push(Reply::text("Whole."));
    assert_eq!(prompt(&model, &dir, &[]).await.status.code(), Some(0));
}

#[tokio::test]
async fn usage_is_streamed_shown_stored_beside_its_reply_and_added_up() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    model.push(Reply::tool("echo", r#"{"text":"hi"}"#).usage(1_234, 1_000, 56));
    model.push(Reply::text("Done.").usage(1_300, 1_200, 4));
    let streamed = prompt(&model, &dir, &["--json"]).await;
    assert!(streamed.status.success(), "{}", String::from_utf8_lossy(&streamed.stderr));
    let events = json_lines(&streamed);
    let usages: Vec<&Value> =
        events.iter().filter(|e| e["type"] == "assistant_message").map(|e| &e["usage"]).collect();
    assert_eq!(
        usages,
        [
            &json!({"input_tokens": 1234, "output_tokens": 56, "cache_read_tokens": 1000, "cache_write_tokens": 0}),
            &json!({"input_tokens": 1300, "output_tokens": 4, "cache_read_tokens": 1200, "cache_write_tokens": 0}),
        ]
    );
    let id = events[0]["session_id"].as_str().unwrap().to_owned();

    // The console shows each call's, dimmed (no colours here: NO_COLOR).
    model.push(Reply::text("Again.").usage(2_000, 0, 7));
    let console = prompt(&model, &dir, &["--session", &id]).await;
    let stdout = String::from_utf8_lossy(&console.stdout);
    assert!(console.status.success(), "{stdout}");
    assert!(stdout.contains("\nin 2,000 · out 7\n"), "{stdout}");

    // Stored beside the replies, in the session's database: the three calls' sum.
    let stored = SqliteStore::open(&dir.path().join("sessions.db")).unwrap().load(&id).unwrap().unwrap();
    assert_eq!(
        stored.usage,
        agent_host::events::TokenUsage {
            input_tokens: 4_534,
            output_tokens: 67,
            cache_read_tokens: 2_200,
            cache_write_tokens: 0
        }
    );
    // `/session` in a later process shows the totals.
    let session = crate::support::console_on(&dir.path().join("config.toml"), Some(&id), "/session\n").await;
    assert!(session.contains("model calls 3; tokens in 4,534 (cached 2,200) · out 67"), "{session}");
}

#[tokio::test]
async fn reasoning_is_shown_apart_streamed_as_its_own_field_and_never_stored() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    model.push(Reply::text("Four.").reasoning("Two and two make four."));
    let streamed = prompt(&model, &dir, &["--json"]).await;
    let events = json_lines(&streamed);
    let reply = events.iter().find(|e| e["type"] == "assistant_message").unwrap();
    assert_eq!(
        (reply["text"].as_str(), reply["reasoning"].as_str()),
        (Some("Four."), Some("Two and two make four."))
    );
    let deltas: String = events
        .iter()
        .filter(|e| e["type"] == "assistant_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "Four.", "the reasoning is not part of the reply's text");

    model.push(Reply::text("Four.").reasoning("Two and two make four."));
    let console = prompt(&model, &dir, &[]).await;
    let stdout = String::from_utf8_lossy(&console.stdout);
    assert!(stdout.contains("reasoning: Two and two make four."), "{stdout}");

    let id = events[0]["session_id"].as_str().unwrap();
    let stored = SqliteStore::open(&dir.path().join("sessions.db")).unwrap().load(id).unwrap().unwrap();
    let texts: Vec<&str> = stored.history.iter().map(|m| m.content.as_str()).collect();
    assert!(!texts.iter().any(|t| t.contains("Two and two")), "{texts:?}");
    assert!(!model.requests().iter().any(|r| r.to_string().contains("Two and two")), "never sent back");
}

#[tokio::test]
async fn call_ids_repeated_across_replies_are_made_unique_and_strict() {
    let model = FakeModel::start().await;
    // The fake numbers each reply's calls from 1, as some servers do.
    model.push(Reply::tool("echo", r#"{"text":"one"}"#));
    model.push(Reply::tool("echo", r#"{"text":"two"}"#));
    model.push(Reply::text("done"));
    let test = TestHost::new(&config(&model)).await.unwrap();
    let session = test.session();
    test.turn(&session, "echo twice").await.unwrap();
    let stored = stored(&test, &session).await;
    let ids: Vec<&str> = stored.history.iter().flat_map(|m| &m.tool_calls).map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], "call_1", "an id seen first is kept");
    assert_ne!(ids[1], "call_1");
    assert!(ids[1].len() == 9 && ids[1].bytes().all(|b| b.is_ascii_alphanumeric()), "{}", ids[1]);
    // The last request pairs the new id with its result.
    let last = model.requests().last().unwrap().clone();
    let answered: Vec<&str> =
        last["messages"].as_array().unwrap().iter().filter_map(|m| m["tool_call_id"].as_str()).collect();
    assert_eq!(answered, ids);
}

/// A reply that breaks off after part of it streamed (here: the stream ends mid-reply) ends
/// the turn with the error, but what streamed is kept as a reply, which the next call sees.
#[tokio::test]
async fn what_streamed_of_a_reply_that_broke_off_is_kept() {
    let model = FakeModel::start().await;
    model.push(Reply::cut("The first half of"));
    let test = TestHost::new(&config(&model)).await.unwrap();
    let session = test.session();
    let error = test.turn(&session, "write").await.expect_err("the reply broke off").to_string();
    assert!(error.contains("cut off"), "{error}");
    let events = test.take_events();
    let kept =
        events.iter().find(|e| matches!(e, Event::AssistantMessage { .. })).expect("an assistant_message");
    let kept = serde_json::to_value(kept).unwrap();
    assert_eq!(
        (kept["text"].as_str(), kept["stop"].as_str()),
        (Some("The first half of"), Some("broken_off"))
    );
    let ends: Vec<TurnEnd> = events
        .iter()
        .filter_map(|e| match e {
            Event::TurnEnded { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [TurnEnd::Error]);

    let stored = stored(&test, &session).await;
    let last = stored.history.last().unwrap();
    assert_eq!((last.content.as_str(), last.tool_calls.len()), ("The first half of", 0));

    model.push(Reply::text("The rest."));
    test.turn(&session, "go on").await.unwrap();
    let sent = model.requests().last().unwrap()["messages"].clone();
    assert!(
        sent.as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "assistant" && m["content"] == "The first half of"),
        "{sent}"
    );
}
