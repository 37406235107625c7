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

/// `rounds` turns of a short prompt (`prompt N`) the model answers `reply N`.
async fn short_turns(model: &FakeModel, test: &TestHost, session: &SessionHandle, rounds: usize) {
    for round in 0..rounds {
        model.push(Reply::text(&format!("reply {round}")));
        test.turn(session, &format!("prompt {round}")).await.unwrap();
    }
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
    short_turns(&model, &test, &session, 6).await;
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
    short_turns(&model, &test, &session, 4).await;
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
    short_turns(&model, &test, &session, 6).await;
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

/// A host whose misbehave plugin (the only plugin) has `switches` under `[plugin.config]`,
/// with a session of six short turns.
async fn misbehaving(model: &FakeModel, switches: &str) -> (TestHost, SessionHandle) {
    // Room for a result over the budget: the host caps a plugin's text at `max_output_kb`.
    let block = format!("[plugin.config]\n{switches}\n[plugin.limits]\nmax_output_kb = 1024\n");
    let config = config_text(&model.url(), &plugin_block("misbehave", &block)).replace(
        "timeout_secs = 5\n",
        "timeout_secs = 5\ncontext_window = 100000\nmax_output_tokens = 500\n",
    );
    let test = TestHost::new(&config).await.expect("the test host starts");
    let session = test.session();
    for round in 0..6 {
        model.push(Reply::tool("echo", &json!({ "text": format!("echo {round}") }).to_string()));
        model.push(Reply::text(&format!("reply {round}")));
        test.turn(&session, &format!("prompt {round}")).await.unwrap();
    }
    test.take_events();
    (test, session)
}

async fn compact_now(test: &TestHost, session: &SessionHandle) -> Result<String, String> {
    let mut live = session.lock().await;
    test.host.command(&mut live, "/compact", &*test.events).await
}

#[tokio::test]
async fn a_compactor_result_that_fails_a_check_or_a_compactor_that_fails_is_replaced_by_truncation() {
    for (switch, says) in [
        ("split_call", "drops message #"),
        ("over_budget", "over the limit"),
        ("trap", "panicked"),
        ("error", "misbehave refuses to compact"),
    ] {
        let model = FakeModel::start().await;
        let (test, session) = misbehaving(&model, &format!("compact = \"{switch}\"")).await;
        let answer = compact_now(&test, &session).await.unwrap();
        assert!(answer.starts_with("compacted by truncate"), "{switch}: {answer}");
        let events = test.take_events();
        let compactions = compacted(&events);
        assert_eq!(compactions.len(), 1, "{switch}: {events:?}");
        let Event::Compacted { strategy, fallback, .. } = compactions[0] else { unreachable!() };
        assert_eq!(strategy, "truncate", "{switch}");
        let fallback = fallback.as_deref().unwrap_or_else(|| panic!("{switch}: no fallback named"));
        assert!(fallback.contains(says) && fallback.contains("misbehave"), "{switch}: {fallback}");
        // The session goes on, on the truncated view.
        model.push(Reply::text("still here"));
        assert_eq!(test.turn(&session, "next").await.unwrap().reply, "still here", "{switch}");
    }
}

#[tokio::test]
async fn a_valid_compaction_from_the_plugin_is_committed_and_the_post_compact_hook_hears_it() {
    let model = FakeModel::start().await;
    let (test, session) = misbehaving(&model, "compact = \"drop_all\"\npost_compact = \"record\"").await;
    let answer = compact_now(&test, &session).await.unwrap();
    assert!(answer.starts_with("compacted by misbehave"), "{answer}");
    model.push(Reply::text("ok"));
    test.turn(&session, "after").await.unwrap();
    let sent = model.requests().last().unwrap().to_string();
    assert!(sent.contains("misbehave summary") && !sent.contains("prompt 2"), "{sent}");
    let live = session.lock().await;
    let recorded = live.bag().get_json("misbehave", "last_compacted").expect("post-compact recorded it");
    assert_eq!(
        (recorded["strategy"].as_str(), recorded["reason"].as_str()),
        (Some("misbehave"), Some("requested"))
    );
    assert_eq!(live.bag().get_json("misbehave", "post_compact_calls"), Some(json!(1)));
    assert_eq!(
        live.history().iter().filter(|m| m.content.starts_with("prompt ")).count(),
        6,
        "the store keeps all"
    );
}

#[tokio::test]
async fn a_veto_holds_while_the_request_fits() {
    let model = FakeModel::start().await;
    let (test, session) = misbehaving(&model, "pre_compact = \"veto\"").await;
    let error = compact_now(&test, &session).await.unwrap_err();
    assert_eq!(error, "misbehave vetoed the compaction: misbehave vetoes");
    let events = test.take_events();
    assert!(events.iter().any(|e| matches!(e, Event::CompactionVetoed { .. })), "{events:?}");
    assert!(compacted(&events).is_empty());
}

#[tokio::test]
async fn the_stock_compaction_plugin_evicts_old_tool_results_and_keeps_every_pair_whole() {
    let model = FakeModel::start().await;
    let plugins = [
        plugin_block("todo", "[plugin.config.loop]\nenabled = false\n"),
        plugin_block("misbehave", ""),
        plugin_block("compaction", ""),
    ]
    .concat();
    // Room enough that evicting suffices beside the fixed part (misbehave offers many tools).
    let config = config_text(&model.url(), &plugins)
        .replace("timeout_secs = 5\n", "timeout_secs = 5\ncontext_window = 8500\nmax_output_tokens = 500\n");
    let test = TestHost::new(&config).await.expect("the test host starts");
    let session = test.session();
    add_todo(&test, &session, "the plan survives eviction").await;
    let output = "a long tool result ".repeat(80);
    for round in 0..30 {
        model.push(Reply::tool("echo", &json!({ "text": format!("{round} {output}") }).to_string()));
        model.push(Reply::text(&format!("reply {round}")));
        test.turn(&session, &format!("prompt {round}")).await.unwrap();
    }
    let events = test.take_events();
    let compactions = compacted(&events);
    assert!(!compactions.is_empty(), "30 results of 1,500 bytes pass 50% of 8,000 tokens");
    for event in &compactions {
        let Event::Compacted { strategy, note, fallback, .. } = event else { unreachable!() };
        assert_eq!((strategy.as_str(), fallback), ("compaction", &None), "{event:?}");
        assert!(note.contains("evicted"), "{note}");
    }
    let last = model.requests().last().unwrap().clone();
    assert!(todo_list(&last).is_some_and(|list| list.contains("the plan survives")), "{last}");
    // Every tool call the last request sends has its result, and the oldest results are gone.
    let messages = last["messages"].as_array().unwrap();
    let calls: Vec<&str> = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let results: Vec<&str> = messages.iter().filter_map(|m| m["tool_call_id"].as_str()).collect();
    assert_eq!(calls, results);
    let tool_outputs: Vec<&str> =
        messages.iter().filter(|m| m["role"] == "tool").filter_map(|m| m["content"].as_str()).collect();
    assert!(
        !tool_outputs.iter().any(|output| output.starts_with("0 a long")),
        "the oldest result was evicted"
    );
    assert!(tool_outputs.iter().any(|output| output.starts_with("29 a long")), "the newest stayed");
}
