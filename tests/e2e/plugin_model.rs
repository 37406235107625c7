//! `model.complete` (contract 0.2.2): a plugin granted `model = true` asks the deployment's
//! model from a tool, through the fake endpoint; the grant, the budgets and the plugin's
//! deadline bound it, and every answer is a `plugin_model_call` event.

use agent_host::events::Event;
use agent_host::state::PluginModelUsage;
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, plugin_block, tool_results};

async fn host(model: &FakeModel, block: &str) -> TestHost {
    TestHost::with_plugins(model, &plugin_block("misbehave", block)).await
}

/// The model's turn: one `ask_model` call with `arguments`.
fn ask(arguments: Value) -> Reply {
    Reply::tool("ask_model", &arguments.to_string())
}

fn model_calls(events: &[Event]) -> Vec<(String, u64, u64)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::PluginModelCall { plugin, input_tokens, output_tokens, .. } => {
                Some((plugin.clone(), *input_tokens, *output_tokens))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_granted_plugin_gets_the_answer_from_a_request_without_tools_and_it_is_recorded() {
    let model = FakeModel::start().await;
    let test = host(&model, "[plugin.grants]\nmodel = true\n").await;
    model
        .push(ask(json!({"system": "Be terse.", "prompt": "Summarise the plan.", "max_output_tokens": 100})));
    model.push(Reply::text("the plan, in short").usage(41, 0, 7));
    model.push(Reply::text("done"));
    let session = test.session();
    test.turn(&session, "summarise").await.unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 3, "the agent's call, the plugin's, the agent's again");
    let asked = &requests[1];
    assert!(asked.get("tools").is_none(), "the plugin's request offers no tools: {asked}");
    assert_eq!(
        asked["messages"],
        json!([{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Summarise the plan."}]),
    );
    assert_eq!(asked["max_tokens"], 100, "the plugin's own output limit: {asked}");
    assert!(requests[0]["tools"].is_array(), "the agent's own calls keep their tools");

    let events = test.take_events();
    assert_eq!(tool_results(&events), [(true, "the plan, in short (tokens: 41 in, 7 out)".to_owned())]);
    assert_eq!(model_calls(&events), [("misbehave".to_owned(), 41, 7)]);
    let usage = PluginModelUsage::of(session.lock().await.bag(), "misbehave");
    assert_eq!(usage, PluginModelUsage { calls: 1, input_tokens: 41, output_tokens: 7 });
}

#[tokio::test]
async fn without_the_grant_the_call_is_an_error_naming_the_grant_and_nothing_is_sent() {
    let model = FakeModel::start().await;
    let test = host(&model, "").await;
    model.push(ask(json!({"prompt": "hello"})));
    model.push(Reply::text("done"));
    test.turn(&test.session(), "go").await.unwrap();
    assert_eq!(model.requests().len(), 2, "no request of the plugin's reached the endpoint");
    let results = tool_results(&test.take_events());
    let (ok, output) = &results[0];
    assert!(!ok);
    assert!(output.contains("plugin `misbehave` may not ask the model"), "{output}");
    assert!(output.contains("`model = true`") && output.contains("[plugin.grants]"), "{output}");
}

#[tokio::test]
async fn asking_for_more_output_than_the_per_call_budget_is_an_error_naming_it() {
    let model = FakeModel::start().await;
    let test = host(&model, "[plugin.grants]\nmodel = true\nmodel_tokens_per_call = 50\n").await;
    model.push(ask(json!({"prompt": "hello", "max_output_tokens": 100})));
    model.push(Reply::text("done"));
    test.turn(&test.session(), "go").await.unwrap();
    assert_eq!(model.requests().len(), 2, "the refused request was not sent");
    let results = tool_results(&test.take_events());
    let (ok, output) = &results[0];
    assert!(!ok);
    assert!(output.contains("up to 100 output tokens"), "{output}");
    assert!(output.contains("budget of 50 per call (`model_tokens_per_call`"), "{output}");
}

#[tokio::test]
async fn once_the_session_budget_is_spent_further_calls_are_refused_naming_it_and_the_numbers() {
    let model = FakeModel::start().await;
    let block = "[plugin.grants]\nmodel = true\nmodel_tokens_per_call = 50\nmodel_tokens_per_session = 60\n";
    let test = host(&model, block).await;
    model.push(ask(json!({"prompt": "first"})));
    model.push(Reply::text("one").usage(40, 0, 30));
    model.push(ask(json!({"prompt": "second"})));
    model.push(Reply::text("done"));
    test.turn(&test.session(), "go").await.unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 4, "the second ask never reached the endpoint");
    // No limit asked: the per-call budget holds the reply, and what the request leaves of
    // the session's (60, less the prompt's own tokens) holds it further.
    let limit = requests[1]["max_tokens"].as_u64().unwrap();
    assert!((30..50).contains(&limit), "{limit}");
    let results = tool_results(&test.take_events());
    assert_eq!(results[0], (true, "one (tokens: 40 in, 30 out)".to_owned()));
    let (ok, output) = &results[1];
    assert!(!ok);
    assert!(
        output.contains("spent its model budget for this session: 70 of 60 tokens in 1 calls"),
        "{output}"
    );
    assert!(output.contains("`model_tokens_per_session`"), "{output}");
}

#[tokio::test]
async fn an_endpoint_that_hangs_is_given_up_on_within_the_plugins_deadline() {
    let model = FakeModel::start().await;
    // `[model] timeout_secs` is 5: the plugin's deadline is what ends the wait.
    let test = host(&model, "[plugin.grants]\nmodel = true\n[plugin.limits]\ntimeout_ms = 1000\n").await;
    model.push(ask(json!({"prompt": "hello"})));
    model.push(Reply::hang());
    model.push(Reply::text("done"));
    test.turn(&test.session(), "go").await.unwrap();
    let events = test.take_events();
    let results = tool_results(&events);
    let (ok, output) = &results[0];
    assert!(!ok);
    assert!(output.contains("the model did not answer within"), "{output}");
    assert!(output.contains("`timeout_ms`"), "names the deadline: {output}");
    assert!(model_calls(&events).is_empty(), "no answer, no record");
}

#[tokio::test]
async fn the_spent_budget_is_stored_with_the_session_and_holds_after_a_resume() {
    let model = FakeModel::start().await;
    let block = "[plugin.grants]\nmodel = true\nmodel_tokens_per_call = 50\nmodel_tokens_per_session = 60\n";
    let first = host(&model, block).await;
    model.push(ask(json!({"prompt": "first"})));
    model.push(Reply::text("one").usage(40, 0, 30));
    model.push(Reply::text("noted"));
    let session = first.session();
    let id = session.lock().await.id().to_owned();
    first.turn(&session, "go").await.unwrap();
    let dir = first.dir;
    drop(session);
    drop(first.host);

    // A second host on the same folder, and so the same database.
    let config = agent_host::Config::load(&dir.path().join("config.toml")).unwrap();
    let client = agent_host::model::ModelClient::from_config(&config).unwrap().unwrap();
    let host = agent_host::Host::new(config, client).await.unwrap();
    let session = host.sessions().open(&id).unwrap().expect("the session is in the store");
    let mut session = session.lock().await;
    assert_eq!(PluginModelUsage::of(session.bag(), "misbehave").tokens(), 70);
    model.push(ask(json!({"prompt": "second"})));
    model.push(Reply::text("done"));
    let events = agent_host::events::CollectEvents::default();
    host.run_turn(&mut session, "again", &events, &agent_host::agent::NoOperator).await.unwrap();
    assert_eq!(model.requests().len(), 5, "the resumed session's ask was refused before it was sent");
    let results = tool_results(&events.take());
    assert!(results[0].1.contains("70 of 60 tokens"), "{results:?}");
}

#[tokio::test]
async fn a_request_larger_than_what_is_left_of_the_session_budget_is_refused_before_it_is_sent() {
    let model = FakeModel::start().await;
    let block =
        "[plugin.grants]\nmodel = true\nmodel_tokens_per_call = 100\nmodel_tokens_per_session = 1000\n";
    let test = host(&model, block).await;
    // About 200 KB of prompt: tens of thousands of tokens in any count.
    let prompt = (0..40_000).map(|n| format!("w{n}")).collect::<Vec<_>>().join(" ");
    model.push(ask(json!({"prompt": prompt})));
    model.push(Reply::text("the big answer").usage(51_218, 0, 10));
    model.push(Reply::text("done"));
    let session = test.session();
    test.turn(&session, "go").await.unwrap();
    let plugin_asks = model.requests().iter().filter(|request| request.get("tools").is_none()).count();
    assert_eq!(plugin_asks, 0, "the oversized request never reached the endpoint");
    let results = tool_results(&test.take_events());
    let (ok, output) = &results[0];
    assert!(!ok, "{output}");
    assert!(output.contains("more than the 1000 tokens left"), "{output}");
    assert!(output.contains("`model_tokens_per_session`"), "names the budget: {output}");
    assert_eq!(PluginModelUsage::of(session.lock().await.bag(), "misbehave").tokens(), 0);
}

#[tokio::test]
async fn an_endpoint_that_reports_no_usage_is_charged_the_estimate_and_the_budget_still_holds() {
    let model = FakeModel::start().await;
    let block =
        "[plugin.grants]\nmodel = true\nmodel_tokens_per_call = 100\nmodel_tokens_per_session = 900\n";
    let test = host(&model, block).await;
    // 200 distinct words: at least 200 tokens in any count.
    let prompt = (100..300).map(|n| format!("w{n}")).collect::<Vec<_>>().join(" ");
    for _ in 0..5 {
        model.push(ask(json!({"prompt": prompt})));
        model.push(Reply::text("an answer, with no usage reported"));
    }
    model.push(Reply::text("done"));
    let session = test.session();
    test.turn(&session, "go").await.unwrap();

    let plugin_asks = model.requests().iter().filter(|request| request.get("tools").is_none()).count();
    assert!(
        plugin_asks < 5,
        "900 tokens cannot pay for five requests of 200+ tokens each: {plugin_asks} sent"
    );
    let usage = PluginModelUsage::of(session.lock().await.bag(), "misbehave");
    assert_eq!(usage.calls, plugin_asks as u64);
    assert!(usage.input_tokens >= 200 * usage.calls, "each call charged at least its words: {usage:?}");
    let results = tool_results(&test.take_events());
    let refused: Vec<&String> = results.iter().filter(|(ok, _)| !ok).map(|(_, output)| output).collect();
    assert!(!refused.is_empty(), "{results:?}");
    assert!(refused.iter().all(|output| output.contains("`model_tokens_per_session`")), "{refused:?}");
}
