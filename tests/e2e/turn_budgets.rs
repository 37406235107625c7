//! The turn's meter and the deployment's caps on it (`[agent] max_turn_tokens`,
//! `max_turn_secs`, `max_continuations`): tokens counted from the endpoint's usage and from
//! a plugin's own `model.complete` calls, a turn ended with a typed reason once it reaches a
//! cap, and `turn_ended` carrying what the turn spent, through the library and the binary.

use agent_host::Event;
use agent_host::events::TurnEnd;
use serde_json::{Value, json};

use crate::support::{
    FakeModel, Reply, TestHost, config_text, json_prompt_command, plugin_block, source_plugin_block,
};

/// A host whose `[agent]` table has `agent` beside max_iterations, with `plugins`.
async fn host(model: &FakeModel, agent: &str, plugins: &str) -> TestHost {
    let config = config_text(&model.url(), plugins).replace("[agent]\n", &format!("[agent]\n{agent}\n"));
    TestHost::new(&config).await.expect("the host starts")
}

/// The `turn_ended` events collected: (reason, iterations, tokens).
fn ends(test: &TestHost) -> Vec<(TurnEnd, u32, u64)> {
    test.take_events()
        .into_iter()
        .filter_map(|event| match event {
            Event::TurnEnded { reason, iterations, tokens, .. } => Some((reason, iterations, tokens)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_turn_ends_with_token_budget_once_its_calls_spent_the_cap() {
    let model = FakeModel::start().await;
    let test = host(&model, "max_turn_tokens = 1000", &plugin_block("misbehave", "")).await;
    let session = test.session();
    // 600 + 100, then 250 + 50: exactly the cap after the second call.
    model.push(Reply::tool("echo", r#"{"text":"one"}"#).usage(600, 0, 100));
    model.push(Reply::tool("echo", r#"{"text":"two"}"#).usage(250, 0, 50));
    model.push(Reply::text("never asked"));
    let outcome = test.turn(&session, "go").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::TokenBudget);
    assert_eq!(model.requests().len(), 2, "no call past the cap");
    assert_eq!(ends(&test), [(TurnEnd::TokenBudget, 2, 1000)]);
}

#[tokio::test]
async fn a_plugins_own_model_calls_count_toward_the_turns_tokens() {
    let model = FakeModel::start().await;
    let grant = "[plugin.grants]\nmodel = true\n";
    let test = host(&model, "max_turn_tokens = 1000", &plugin_block("misbehave", grant)).await;
    let session = test.session();
    // The turn's own call spends 300; the plugin's question 800 more: past the cap.
    model.push(Reply::tool("ask_model", r#"{"prompt":"judge this"}"#).usage(250, 0, 50));
    model.push(Reply::text("a verdict").usage(700, 0, 100));
    model.push(Reply::text("never asked"));
    let outcome = test.turn(&session, "go").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::TokenBudget);
    assert_eq!(model.requests().len(), 2, "the turn's call and the plugin's, no third");
    assert_eq!(ends(&test), [(TurnEnd::TokenBudget, 1, 1100)]);

    // Under the cap, a turn ends as the model ends it and says what it spent.
    let model = FakeModel::start().await;
    let roomy = host(&model, "max_turn_tokens = 5000", &plugin_block("misbehave", grant)).await;
    let session = roomy.session();
    model.push(Reply::tool("ask_model", r#"{"prompt":"judge this"}"#).usage(250, 0, 50));
    model.push(Reply::text("a verdict").usage(700, 0, 100));
    model.push(Reply::text("done").usage(400, 0, 10));
    assert_eq!(roomy.turn(&session, "go").await.unwrap().end, TurnEnd::Done);
    assert_eq!(ends(&roomy), [(TurnEnd::Done, 2, 1510)]);
}

#[tokio::test]
async fn a_turn_that_ran_past_its_seconds_ends_with_time_budget_before_the_next_call() {
    let model = FakeModel::start().await;
    let limits = "[plugin.limits]\ntimeout_ms = 5000\n";
    let test = host(&model, "max_turn_secs = 1", &plugin_block("misbehave", limits)).await;
    let session = test.session();
    model.push(Reply::tool("sleep", r#"{"ms":1100}"#));
    model.push(Reply::text("never asked"));
    let outcome = test.turn(&session, "go").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::TimeBudget);
    assert_eq!(model.requests().len(), 1);
    let results: Vec<Value> = test
        .take_events()
        .into_iter()
        .filter_map(|event| match event {
            Event::ToolResult { output, .. } => Some(json!(output)),
            _ => None,
        })
        .collect();
    assert_eq!(results, [json!("slept")], "the call that ran over still finished");
}

#[tokio::test]
async fn stop_hooks_send_the_model_on_no_more_than_max_continuations_times() {
    let model = FakeModel::start().await;
    let test = host(&model, "max_continuations = 1", &plugin_block("todo", "")).await;
    let session = test.session();
    {
        let mut locked = session.lock().await;
        let added = json!({"todos": [{"title": "ship it"}]});
        assert!(test.host.invoke_tool(&mut locked, "todos_add", &added, &*test.events).await.unwrap().ok);
    }
    model.push(Reply::text("I think I am done."));
    model.push(Reply::text("Still done."));
    model.push(Reply::text("never asked"));
    let outcome = test.turn(&session, "ship it").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::Done, "the turn ends as the model ended it");
    assert_eq!(model.requests().len(), 2, "one continuation, then no more though the todo is open");
    let continued = test.take_events().iter().filter(|e| matches!(e, Event::Continued { .. })).count();
    assert_eq!(continued, 1, "the hooks were not asked a second time");
}

#[tokio::test]
async fn a_turn_out_of_tokens_when_the_model_stops_asks_no_stop_hook() {
    let model = FakeModel::start().await;
    let test = host(&model, "max_turn_tokens = 100", &plugin_block("todo", "")).await;
    let session = test.session();
    {
        let mut locked = session.lock().await;
        let added = json!({"todos": [{"title": "ship it"}]});
        assert!(test.host.invoke_tool(&mut locked, "todos_add", &added, &*test.events).await.unwrap().ok);
    }
    model.push(Reply::text("I think I am done.").usage(90, 0, 10));
    model.push(Reply::text("never asked"));
    let outcome = test.turn(&session, "ship it").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::TokenBudget);
    assert_eq!(model.requests().len(), 1);
    assert!(!test.take_events().iter().any(|e| matches!(e, Event::Continued { .. })));
}

#[tokio::test]
async fn the_binary_exits_6_on_a_budget_and_its_json_says_what_the_turn_spent() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("echo", r#"{"text":"one"}"#).usage(900, 0, 200));
    model.push(Reply::text("never asked"));
    let dir = tempfile::tempdir().unwrap();
    let config = config_text(&model.url(), &plugin_block("misbehave", ""))
        .replace("[agent]\n", "[agent]\nmax_turn_tokens = 1000\n");
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let output = json_prompt_command(dir.path(), None, "go")
        .env("AGENT_HOST_TEST_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(6), "{}", String::from_utf8_lossy(&output.stderr));
    let lines = crate::event_schema::validated_lines(&String::from_utf8_lossy(&output.stdout));
    let ended = lines.iter().find(|line| line["type"] == "turn_ended").expect("a turn_ended line");
    assert_eq!(ended["reason"], "token_budget");
    assert_eq!(ended["tokens"], 1100);
    assert_eq!(ended["iterations"], 1);
    assert_eq!(ended.get("estimated"), None, "the endpoint reported every figure: {ended}");
}

/// Against an endpoint that reports no usage (as many local servers do), each call is
/// charged the host's estimate: here an `echo` whose argument alone is 9,200 bytes, about
/// 2,300 tokens at the 4 bytes a token the host counts by for a model it has no tokenizer
/// for. Counted as nothing, seven of them ran past a cap of 1,000 (issue 47, M4).
#[tokio::test]
async fn an_endpoint_that_reports_no_usage_is_charged_the_estimate_and_the_cap_holds() {
    let model = FakeModel::start().await;
    let big = json!({ "text": "word ".repeat(1_840) }).to_string();
    for _ in 0..7 {
        model.push(Reply::tool("echo", &big));
    }
    model.push(Reply::text("never asked"));
    let dir = tempfile::tempdir().unwrap();
    let config = config_text(&model.url(), &plugin_block("misbehave", ""))
        .replace("max_iterations = 6", "max_iterations = 10")
        .replace("[agent]\n", "[agent]\nmax_turn_tokens = 1000\n");
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let output = json_prompt_command(dir.path(), None, "go")
        .env("AGENT_HOST_TEST_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!(output.status.code(), Some(6), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(requests.len(), 1, "the first call alone spent the cap");
    let lines = crate::event_schema::validated_lines(&String::from_utf8_lossy(&output.stdout));
    let ended = lines.iter().find(|line| line["type"] == "turn_ended").expect("a turn_ended line");
    assert_eq!((ended["reason"].as_str(), ended["iterations"].as_u64()), (Some("token_budget"), Some(1)));
    assert!(ended["tokens"].as_u64().unwrap() >= 2_300, "the reply's argument alone: {ended}");
    assert_eq!(ended["estimated"], true, "{ended}");
}

#[tokio::test]
async fn a_cap_of_zero_is_refused_naming_the_field() {
    let model = FakeModel::start().await;
    for field in ["max_turn_tokens", "max_turn_secs"] {
        let config = config_text(&model.url(), "").replace("[agent]\n", &format!("[agent]\n{field} = 0\n"));
        let error = TestHost::new(&config).await.err().expect("refused");
        assert!(format!("{error:#}").contains(&format!("`agent.{field}`: must be at least 1")), "{error:#}");
    }
}

/// A tool's output, parsed, from the `tool_result` events collected.
fn tool_outputs(test: &TestHost, tool: &str) -> Vec<Value> {
    test.take_events()
        .into_iter()
        .filter_map(|event| match event {
            Event::ToolResult { name, output, .. } if name == tool => {
                Some(serde_json::from_str(&output).unwrap())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_plugin_reads_the_turns_meter_and_the_caps_through_the_meter_import() {
    let model = FakeModel::start().await;
    let test =
        host(&model, "max_turn_tokens = 5000\nmax_turn_secs = 60", &plugin_block("misbehave", "")).await;
    let session = test.session();
    model.push(Reply::tool("read_meter", "{}").usage(100, 0, 20));
    model.push(Reply::tool("read_meter", "{}").usage(300, 0, 30));
    model.push(Reply::text("done"));
    test.turn(&session, "go").await.unwrap();
    let caps = json!({"max_iterations": 6, "max_turn_tokens": 5000, "max_turn_secs": 60});
    let reading = |tokens: u64, calls: u32| {
        let mut reading = json!({"turn_tokens": tokens, "turn_model_calls": calls, "turn_continuations": 0});
        reading.as_object_mut().unwrap().extend(caps.as_object().unwrap().clone());
        reading
    };
    // Each call reads the meter with its own reply's tokens in it.
    assert_eq!(tool_outputs(&test, "read_meter"), [reading(120, 1), reading(450, 2)]);

    // Outside a turn nothing is spent; the caps are the deployment's all the same.
    let mut locked = session.lock().await;
    let outside = test.host.invoke_tool(&mut locked, "read_meter", &json!({}), &*test.events).await.unwrap();
    assert_eq!(serde_json::from_str::<Value>(&outside.output).unwrap(), reading(0, 0));
}

#[tokio::test]
async fn a_python_plugin_reads_the_meter_through_its_sdk() {
    let model = FakeModel::start().await;
    let test = host(&model, "max_turn_tokens = 5000", &source_plugin_block("testing/misbehave-py", "")).await;
    let session = test.session();
    model.push(Reply::tool("read_meter", "{}").usage(100, 0, 20));
    model.push(Reply::text("done"));
    test.turn(&session, "go").await.unwrap();
    assert_eq!(
        tool_outputs(&test, "read_meter"),
        [json!({"turn_tokens": 120, "turn_model_calls": 1, "max_turn_tokens": 5000})]
    );
}
