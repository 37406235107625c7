//! The Messages endpoint failing: `retry-after` honoured, 529 and `overloaded_error`
//! retried, a 400 not, a prompt too long told apart, a wrong key named by its variable, an
//! `error` event mid-stream, a connection dropped after some text (the text kept), and
//! extended thinking refused at start-up. The key never shows in an error.

use std::time::Duration;

use agent_host::model::{History, HistoryEncodings, Message, ModelError, ModelReply, ModelRequest};

use super::host;
use crate::support::anthropic_fake::{AnthropicFake, AnthropicReply as Reply, KEY, KEY_ENV};
use crate::support::{TestHost, plugin_block};

/// One model call straight through the host's client, with a one-message history.
async fn call(test: &TestHost) -> (Result<ModelReply, ModelError>, String) {
    let history = History::from(vec![Message::user("hi")]);
    let request = ModelRequest {
        session_id: "s",
        system: "Be brief.",
        history: &history,
        injected: &[],
        tools: &[],
        max_output_tokens: None,
        model: None,
    };
    let mut shown = String::new();
    let result = test
        .host
        .model()
        .complete(&request, &mut HistoryEncodings::default(), &mut |text| shown.push_str(text))
        .await;
    (result, shown)
}

async fn bare_host(fake: &AnthropicFake) -> TestHost {
    host(fake, &plugin_block("misbehave", "")).await
}

#[tokio::test]
async fn retry_after_is_waited_for_before_the_next_attempt() {
    let fake = AnthropicFake::start().await;
    fake.push(Reply::status(429).retry_after(1)).push(Reply::text("made it"));
    let test = bare_host(&fake).await;
    let outcome = test.turn(&test.session(), "hi").await.unwrap();
    assert_eq!(outcome.reply, "made it");
    let received = fake.received();
    assert_eq!(received.len(), 2, "one retry");
    let waited = received[1].at - received[0].at;
    // The backoff alone is 10 ms (`retry_backoff_ms`); the header asked for a second.
    assert!(waited >= Duration::from_secs(1), "the second attempt came {waited:?} after the first");
}

#[tokio::test]
async fn overloaded_is_retried_and_runs_out_with_the_endpoints_words() {
    let fake = AnthropicFake::start().await;
    fake.push(Reply::status(529)).push(Reply::status(529)).push(Reply::text("made it"));
    let test = bare_host(&fake).await;
    assert_eq!(test.turn(&test.session(), "hi").await.unwrap().reply, "made it");
    assert_eq!(fake.received().len(), 3);

    let fake = AnthropicFake::start().await;
    for _ in 0..3 {
        fake.push(Reply::status_saying(529, "Overloaded"));
    }
    let test = bare_host(&fake).await;
    let error = test.turn(&test.session(), "hi").await.unwrap_err().to_string();
    assert!(error.contains("HTTP 529 after 3 attempt(s): overloaded_error: Overloaded"), "{error}");
    assert!(error.contains("request-id req_fake_"), "the request id, for the provider's support: {error}");
}

#[tokio::test]
async fn a_bad_request_is_not_retried_and_a_prompt_too_long_is_told_apart() {
    let fake = AnthropicFake::start().await;
    fake.push(Reply::status_saying(400, "temperature: Input should be less than or equal to 1"));
    let test = bare_host(&fake).await;
    let error = test.turn(&test.session(), "hi").await.unwrap_err().to_string();
    assert!(
        error.contains("HTTP 400 after 1 attempt(s): invalid_request_error: temperature: Input should be"),
        "{error}"
    );
    assert_eq!(fake.received().len(), 1);

    fake.push(Reply::status_saying(400, "prompt is too long: 210000 tokens > 200000 maximum"));
    let (result, _) = call(&test).await;
    match result {
        Err(ModelError::ContextTooLong { status: 400, body }) => {
            assert!(body.contains("210000 tokens"), "{body}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(fake.received().len(), 2);
}

#[tokio::test]
async fn a_refused_key_names_its_variable_and_no_error_shows_the_key() {
    let fake = AnthropicFake::start().await;
    fake.push(Reply::status(401));
    let test = bare_host(&fake).await;
    let error = test.turn(&test.session(), "hi").await.unwrap_err().to_string();
    assert!(error.contains(&format!("check the variable `{KEY_ENV}`")), "{error}");

    // Some gateways quote the request, headers included, in their errors.
    for _ in 0..3 {
        fake.push(Reply::status_saying(500, &format!("upstream failed; request headers: x-api-key: {KEY}")));
    }
    let (result, _) = call(&test).await;
    let error = result.unwrap_err().to_string();
    assert!(error.contains("x-api-key: [redacted]") && !error.contains(KEY), "{error}");
    fake.push(Reply::error_event("", "invalid_request_error", &format!("bad key {KEY}")));
    let error = call(&test).await.0.unwrap_err().to_string();
    assert!(error.contains("invalid_request_error") && !error.contains(KEY), "{error}");
}

#[tokio::test]
async fn an_error_event_before_any_text_is_retried_and_one_after_text_cuts_the_reply() {
    let fake = AnthropicFake::start().await;
    fake.push(Reply::error_event("", "overloaded_error", "Overloaded")).push(Reply::text("second try"));
    let test = bare_host(&fake).await;
    let (reply, shown) = call(&test).await;
    assert_eq!(reply.unwrap().text, "second try");
    assert_eq!((shown.as_str(), fake.received().len()), ("second try", 2));

    fake.push(Reply::error_event("Half of the ans", "overloaded_error", "Overloaded"));
    let (result, shown) = call(&test).await;
    match result {
        Err(ModelError::Cut { detail, partial }) => {
            assert!(detail.contains("overloaded_error: Overloaded"), "{detail}");
            assert_eq!(partial.text, "Half of the ans");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(shown, "Half of the ans", "what was shown is not shown twice");
    assert_eq!(fake.received().len(), 3, "not retried once text was shown");

    fake.push(Reply::error_event("", "invalid_request_error", "messages: the fake says no"));
    let error = call(&test).await.0.unwrap_err().to_string();
    assert!(error.contains("mid-reply: invalid_request_error: messages: the fake says no"), "{error}");
    assert_eq!(fake.received().len(), 4, "an error another attempt would meet again is final");
}

#[tokio::test]
async fn a_connection_dropped_after_text_keeps_the_text_and_one_dropped_before_is_retried() {
    let fake = AnthropicFake::start().await;
    fake.push(Reply::drop_after("The first half"));
    let test = bare_host(&fake).await;
    let (result, shown) = call(&test).await;
    match result {
        Err(ModelError::Cut { detail, partial }) => {
            assert!(detail.contains("the connection broke"), "{detail}");
            assert_eq!((partial.text.as_str(), shown.as_str()), ("The first half", "The first half"));
        }
        other => panic!("{other:?}"),
    }

    fake.push(Reply::drop_after("")).push(Reply::text("whole"));
    let (result, shown) = call(&test).await;
    assert_eq!((result.unwrap().text.as_str(), shown.as_str()), ("whole", "whole"));
    assert_eq!(fake.received().len(), 3);
}

#[tokio::test]
async fn extended_thinking_in_extra_body_is_refused_at_start_up() {
    let fake = AnthropicFake::start().await;
    let config = fake.config("").replace(
        "[storage]",
        "[model.extra_body]\nthinking = { type = \"enabled\", budget_tokens = 2048 }\n\n[storage]",
    );
    let error = TestHost::new(&config).await.err().expect("the host refuses to start").to_string();
    assert!(error.contains("`[model] extra_body.thinking`"), "{error}");

    let config = fake.config("").replace("[storage]", "[model.extra_body]\ntop_k = 5\n\n[storage]");
    let test = TestHost::new(&config).await.unwrap();
    fake.push(Reply::text("ok"));
    assert_eq!(call(&test).await.0.unwrap().text, "ok");
    assert_eq!(fake.requests()[0]["top_k"], 5, "other options are passed on");
}
