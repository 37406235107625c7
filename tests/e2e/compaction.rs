//! Compaction in long sessions, against the fake endpoint with real plugins: no request
//! grows past a small context window however long the session, the todo list and the mode
//! are in every request after a compaction, the store keeps every original message, and a
//! context-length refusal is compacted and sent once more.

use agent_host::Event;
use agent_host::agent::SessionHandle;
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, paragraphs, plugin_block, system_prompt};

/// Todo (its completion loop off), agent-mode and misbehave (`echo`), with `[model]` lines added.
async fn host(model: &FakeModel, model_lines: &str) -> TestHost {
    let plugins = [
        plugin_block("todo", "[plugin.config.loop]\nenabled = false\n"),
        plugin_block("agent-mode", ""),
        plugin_block("misbehave", ""),
    ]
    .concat();
    let config = config_text(&model.url(), &plugins)
        .replace("timeout_secs = 5\n", &format!("timeout_secs = 5\n{model_lines}\n"));
    TestHost::new(&config).await.expect("the test host starts")
}

fn compacted(events: &[Event]) -> Vec<&Event> {
    events.iter().filter(|event| matches!(event, Event::Compacted { .. })).collect()
}

fn todo_list(request: &Value) -> Option<&str> {
    paragraphs(request).into_iter().find(|text| text.starts_with("### Current todo list"))
}

async fn add_todo(test: &TestHost, session: &SessionHandle, title: &str) {
    let mut session = session.lock().await;
    let args = json!({"todos": [{"title": title}]});
    let result = test.host.invoke_tool(&mut session, "todos_add", &args, &*test.events).await.unwrap();
    assert!(result.ok, "{}", result.output);
}

#[tokio::test]
async fn three_hundred_rounds_in_an_8000_token_window_never_outgrow_it_and_lose_neither_plan_nor_mode() {
    let model = FakeModel::start().await;
    let test = host(&model, "context_window = 8000\nmax_output_tokens = 500").await;
    let session = test.session();
    add_todo(&test, &session, "keep this plan through every compaction").await;
    // Each round: a prompt, a tool call with its result, a reply: some 600 bytes.
    let filler = "words that take room in the history ".repeat(4);
    let rounds = 300;
    for round in 0..rounds {
        model.push(Reply::tool("echo", &json!({ "text": format!("echo {round}: {filler}") }).to_string()));
        model.push(Reply::text(&format!("round {round} done: {filler}")));
        test.turn(&session, &format!("round {round}: {filler}")).await.unwrap();
    }
    let events = test.take_events();

    let mut estimates = 0;
    for event in &events {
        if let Event::ModelRequest { context, .. } = event {
            estimates += 1;
            assert!(context.estimated_tokens <= 8000, "a request past the window: {context:?}");
        }
    }
    assert_eq!(estimates, 2 * rounds);
    let compactions = compacted(&events);
    assert!(
        compactions.len() >= 5,
        "a history of ~45,000 tokens in 8,000 compacts often: {}",
        compactions.len()
    );
    for event in &compactions {
        let Event::Compacted { strategy, fallback, tokens_before, tokens_after, reason, .. } = event else {
            unreachable!()
        };
        assert_eq!((strategy.as_str(), fallback, reason.as_str()), ("truncate", &None, "threshold"));
        assert!(tokens_after < tokens_before, "{event:?}");
    }

    let requests = model.requests();
    let last = requests.last().unwrap();
    assert!(todo_list(last).is_some_and(|list| list.contains("keep this plan")), "{last}");
    assert!(system_prompt(last).contains("The current mode is `plan`"), "{}", system_prompt(last));
    let sent = last.to_string();
    // The opening prompt stays (the truncation keeps what the session started with).
    assert!(sent.contains("round 299:") && !sent.contains("round 1:"), "the oldest went, the newest stayed");

    // The store keeps every message: 300 prompts, each with a call, its result and a reply.
    let session = session.lock().await;
    let history = session.history();
    assert_eq!(
        history.iter().filter(|m| m.content.starts_with("round ") && m.tool_calls.is_empty()).count(),
        600
    );
    assert!(history[..8].iter().any(|m| m.content.starts_with("round 0:")));
    assert!(session.to_send().len() < history.len() / 10, "{} of {}", session.to_send().len(), history.len());
}

#[tokio::test]
async fn a_context_length_refusal_compacts_once_and_sends_once_more() {
    let model = FakeModel::start().await;
    let test = host(&model, "context_window = 100000\nmax_output_tokens = 500").await;
    let session = test.session();
    for round in 0..6 {
        model.push(Reply::text(&format!("reply {round}")));
        test.turn(&session, &format!("prompt {round}")).await.unwrap();
    }
    test.take_events();
    let refusal = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130415 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    model.push(Reply::status_body(400, refusal));
    model.push(Reply::text("fits now"));
    let before = model.requests().len();
    let outcome = test.turn(&session, "one more").await.unwrap();
    assert_eq!(outcome.reply, "fits now");
    let requests = model.requests();
    assert_eq!(requests.len(), before + 2, "one refused request, one resent");
    let events = test.take_events();
    let compactions = compacted(&events);
    assert_eq!(compactions.len(), 1, "{compactions:?}");
    let Event::Compacted { reason, replaced, .. } = compactions[0] else { unreachable!() };
    assert_eq!(reason, "context_too_long");
    assert!(*replaced > 0);
    let resent = requests.last().unwrap().to_string();
    assert!(resent.contains("one more") && !resent.contains("prompt 1"), "{resent}");
}

#[tokio::test]
async fn a_second_refusal_after_the_compaction_ends_the_turn_with_it() {
    let model = FakeModel::start().await;
    let test = host(&model, "context_window = 100000\nmax_output_tokens = 500").await;
    let session = test.session();
    for round in 0..4 {
        model.push(Reply::text(&format!("reply {round}")));
        test.turn(&session, &format!("prompt {round}")).await.unwrap();
    }
    let refusal =
        r#"{"error":{"message":"maximum context length exceeded","code":"context_length_exceeded"}}"#;
    model.push(Reply::status_body(400, refusal));
    model.push(Reply::status_body(400, refusal));
    model.fallback(Reply::text("should not be asked"));
    let before = model.requests().len();
    let error = test.turn(&session, "again").await.unwrap_err();
    assert!(error.to_string().contains("context"), "{error}");
    assert_eq!(model.requests().len(), before + 2, "one retry, not a loop");
}

#[tokio::test]
async fn compact_on_request_truncates_and_says_what_it_did() {
    let model = FakeModel::start().await;
    let test = host(&model, "context_window = 100000\nmax_output_tokens = 500").await;
    let session = test.session();
    for round in 0..6 {
        model.push(Reply::text(&format!("reply {round}")));
        test.turn(&session, &format!("prompt {round}")).await.unwrap();
    }
    let answer = {
        let mut live = session.lock().await;
        test.host.command(&mut live, "/compact", &*test.events).await.unwrap()
    };
    assert!(answer.starts_with("compacted by truncate: dropped the "), "{answer}");
    model.push(Reply::text("ok"));
    test.turn(&session, "after").await.unwrap();
    let sent = model.requests().last().unwrap().to_string();
    assert!(sent.contains("prompt 5") && !sent.contains("prompt 1"), "{sent}");
    // A resumed session sends the compacted view too.
    let id = session.lock().await.id().to_owned();
    drop(session);
    let reopened = test.host.sessions().open(&id).unwrap().unwrap();
    let reopened = reopened.lock().await;
    assert!(reopened.to_send().len() < reopened.history().len());
}

#[tokio::test]
async fn with_compaction_off_nothing_is_compacted() {
    let model = FakeModel::start().await;
    let test = host(&model, "context_window = 4000\nmax_output_tokens = 500").await;
    let config = std::fs::read_to_string(test.dir.path().join("config.toml")).unwrap();
    std::fs::write(test.dir.path().join("config.toml"), format!("{config}\n[compaction]\nenabled = false\n"))
        .unwrap();
    let test =
        TestHost::new(&std::fs::read_to_string(test.dir.path().join("config.toml")).unwrap()).await.unwrap();
    let session = test.session();
    let filler = "x".repeat(2000);
    for round in 0..8 {
        model.push(Reply::text("ok"));
        test.turn(&session, &format!("{round} {filler}")).await.unwrap();
    }
    assert!(compacted(&test.take_events()).is_empty());
}
