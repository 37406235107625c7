use super::*;
use crate::conversation::{History, Message};

fn request<'a>(system: &'a str, history: &'a History, injected: &'a [Message]) -> ModelRequest<'a> {
    ModelRequest {
        session_id: "s",
        system,
        history,
        injected,
        tools: &[],
        max_output_tokens: None,
        model: None,
    }
}

fn bytes_budget() -> TokenBudget {
    TokenBudget { counter: Counter::Bytes, window: Some(8_000), output_reserve: 500 }
}

fn usage(input_tokens: u64) -> TokenUsage {
    TokenUsage { input_tokens, output_tokens: 9, ..TokenUsage::default() }
}

/// OpenAI's cookbook ("How to count tokens with tiktoken") sends these messages to
/// `gpt-4-0613` and reads 129 prompt tokens from the API's usage. Its messages carry `name`s,
/// which the host's do not; each costs the name's tokens and one more, per the same page.
#[test]
fn a_chat_request_counts_as_the_api_counted_it() {
    let messages = [
        (
            "system",
            None,
            "You are a helpful, pattern-following assistant that translates corporate jargon into plain English.",
        ),
        ("system", Some("example_user"), "New synergies will help drive top-line growth."),
        ("system", Some("example_assistant"), "Things working well together will increase revenue."),
        (
            "system",
            Some("example_user"),
            "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage.",
        ),
        (
            "system",
            Some("example_assistant"),
            "Let's talk later when we're less busy about how to do better.",
        ),
        (
            "user",
            None,
            "This late pivot means we don't have time to boil the ocean for the client deliverable.",
        ),
    ];
    let encoding = Encoding::Cl100kBase;
    let names: u64 =
        messages.iter().filter_map(|(_, name, _)| *name).map(|name| encoding.count(name) + 1).sum();
    let history = History::from(
        messages[1..]
            .iter()
            .map(|&(role, _, text)| if role == "user" { Message::user(text) } else { Message::system(text) })
            .collect::<Vec<_>>(),
    );
    let budget = TokenBudget { counter: Counter::for_model("gpt-4-0613"), window: None, output_reserve: 0 };
    let estimate = ContextAccount::default().estimate(&budget, &request(messages[0].2, &history, &[]), None);
    assert_eq!(estimate.counted_by, CountedBy::Cl100kBase);
    assert_eq!(estimate.prompt_tokens, 129 - names);
    assert_eq!(estimate.estimated_tokens, estimate.prompt_tokens, "no reserve, no window");
}

#[test]
fn a_request_measured_again_after_its_reply_comes_to_what_the_endpoint_counted() {
    let mut account = ContextAccount::default();
    let history = History::from(vec![Message::user("a question of some length, for the estimate")]);
    let first = account.estimate(&bytes_budget(), &request("be brief", &history, &[]), None);
    assert_eq!(first.counted_by, CountedBy::Bytes);
    assert_eq!((first.output_reserve, first.window), (500, Some(8_000)));
    assert_eq!(first.estimated_tokens, first.prompt_tokens + 500);
    account.replied(Some(&usage(1_000)));
    let again =
        account.estimate(&bytes_budget(), &request("be brief", &history, &[]), Some((1, usage(1_000))));
    assert_eq!((again.prompt_tokens, again.counted_by), (1_000, CountedBy::CalibratedBytes));
    assert_eq!(again.last_usage, Some(usage(1_000)));
}

#[test]
fn a_calibrated_estimate_grows_with_the_history_at_the_endpoints_rate() {
    let mut account = ContextAccount::default();
    let text = "x".repeat(400);
    let mut history = History::from(vec![Message::user(text.clone())]);
    account.estimate(&bytes_budget(), &request("", &history, &[]), None);
    account.replied(Some(&usage(1_000)));
    history.push(Message::assistant(text.clone(), Vec::new()));
    let longer = account.estimate(&bytes_budget(), &request("", &history, &[]), None);
    // Twice the messages, one fixed part: less than twice the tokens, well over the first.
    assert!((1_800..2_000).contains(&longer.prompt_tokens), "{longer:?}");
    let injected = [Message::user(text)];
    let with_injected = account.estimate(&bytes_budget(), &request("", &history, &injected), None);
    assert!(with_injected.prompt_tokens > longer.prompt_tokens + 900, "{with_injected:?}");
}

#[test]
fn a_resumed_session_is_calibrated_by_its_stored_usage_as_a_live_one_is() {
    let question = Message::user("what is in the box?");
    let answer = Message::assistant("a smaller box, and in it another", Vec::new());
    let mut live = ContextAccount::default();
    let mut history = History::from(vec![question.clone()]);
    live.estimate(&bytes_budget(), &request("sys", &history, &[]), None);
    live.replied(Some(&usage(700)));
    history.push(answer.clone());
    let live_estimate = live.estimate(&bytes_budget(), &request("sys", &history, &[]), Some((1, usage(700))));
    let resumed_history = History::from(vec![question, answer]);
    let resumed = ContextAccount::default().estimate(
        &bytes_budget(),
        &request("sys", &resumed_history, &[]),
        Some((1, usage(700))),
    );
    assert_eq!(resumed, live_estimate);
    assert_eq!(resumed.counted_by, CountedBy::CalibratedBytes);
}

#[test]
fn a_reply_without_usage_keeps_the_calibration_it_had() {
    let mut account = ContextAccount::default();
    let history = History::from(vec![Message::user("one")]);
    account.estimate(&bytes_budget(), &request("", &history, &[]), None);
    account.replied(None);
    let uncalibrated = account.estimate(&bytes_budget(), &request("", &history, &[]), None);
    assert_eq!(uncalibrated.counted_by, CountedBy::Bytes);
    account.replied(Some(&usage(50)));
    account.estimate(&bytes_budget(), &request("", &history, &[]), None);
    account.replied(Some(&TokenUsage::default()));
    let kept = account.estimate(&bytes_budget(), &request("", &history, &[]), None);
    assert_eq!(
        (kept.prompt_tokens, kept.counted_by),
        (50, CountedBy::CalibratedBytes),
        "a zero count says nothing"
    );
}

#[test]
fn a_rewritten_history_and_a_changed_system_prompt_are_counted_afresh() {
    let budget =
        TokenBudget { counter: Counter::Tokenizer(Encoding::O200kBase), window: None, output_reserve: 0 };
    let fresh = |system: &str, history: &History| {
        ContextAccount::default().estimate(&budget, &request(system, history, &[]), None).prompt_tokens
    };
    let mut account = ContextAccount::default();
    let mut history = History::from(vec![Message::user("word ".repeat(200))]);
    let long = account.estimate(&budget, &request("sys", &history, &[]), None);
    history.rewrite(|messages| messages[0].content = "word".into());
    let short = account.estimate(&budget, &request("sys", &history, &[]), None);
    assert!(short.prompt_tokens < long.prompt_tokens);
    assert_eq!(short.prompt_tokens, fresh("sys", &history), "nothing kept of the old message");
    let other = account.estimate(&budget, &request("sys and more", &history, &[]), None);
    assert!(other.prompt_tokens > short.prompt_tokens);
    assert_eq!(other.prompt_tokens, fresh("sys and more", &history), "nothing kept of the old prompt");
}

#[test]
fn a_scripted_model_is_counted_by_bytes_whatever_its_name() {
    let config = crate::config::Config::parse(
        "[model]\nmodel = \"gpt-4o\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
        std::path::Path::new("c.toml"),
    )
    .unwrap();
    let client = ModelClient::from_config(&config).unwrap().unwrap();
    let budget = TokenBudget::new(&config.model, &client);
    assert_eq!(
        (budget.counter, budget.window, budget.output_reserve),
        (Counter::Tokenizer(Encoding::O200kBase), Some(128_000), 16_384)
    );
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.toml");
    std::fs::write(&script, "[[turn]]\ntext = \"done\"\n").unwrap();
    let scripted =
        ModelClient::Scripted(std::sync::Arc::new(crate::model::ScriptedModel::from_file(&script).unwrap()));
    assert_eq!(
        TokenBudget::new(&config.model, &scripted).counter,
        Counter::Bytes,
        "the demo, under the same [model]"
    );
}

#[test]
fn the_tokens_in_use_are_the_endpoints_once_it_reported_them() {
    let mut account = ContextAccount::default();
    assert_eq!(account.in_use(), None);
    let history = History::from(vec![Message::user("hello there")]);
    let estimate = account.estimate(&bytes_budget(), &request("", &history, &[]), None);
    assert_eq!(account.in_use(), Some(InUse { tokens: estimate.prompt_tokens, reported: false }));
    account.replied(None);
    assert_eq!(account.in_use().map(|in_use| in_use.reported), Some(false), "nothing reported");
    account.estimate(&bytes_budget(), &request("", &history, &[]), None);
    account.replied(Some(&usage(120)));
    assert_eq!(account.in_use(), Some(InUse { tokens: 129, reported: true }), "input and output");
    assert_eq!(ContextAccount::resumed(Some(usage(40))).in_use(), Some(InUse { tokens: 49, reported: true }));
    assert_eq!(ContextAccount::resumed(None).in_use(), None);
}
