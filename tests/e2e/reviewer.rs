//! The `reviewer` plugin on the host's `review` primitive (contract 0.2.7): a call the
//! permission hooks would put to the operator is first reviewed by the model against the
//! config's policy. Allow runs it, deny refuses it with the reason the model reads, and a
//! failed review is neither: the operator is asked (or `agent.on_ask` decides), and the
//! operator's "always" then binds to that exact call. Every review is audited with the call.

use agent_host::Event;
use agent_host::agent::{ApprovalAnswer, NoOperator};
use agent_host::events::{CallDecision, ReviewOutcome};
use serde_json::{Value, json};

use crate::support::judged::decisions;
use crate::support::{FakeModel, Reply, ScriptedApprover, TestHost, config_text, plugin_block, tool_results};

const POLICY: &str = "Allow building; deny anything that deletes files.";

async fn host(model: &FakeModel, on_ask: &str) -> TestHost {
    let plugins = format!(
        "{}{}{}",
        plugin_block("misbehave", ""),
        plugin_block(
            "permissions",
            "[plugin.config]\nrules = [{ tool = \"remember\", decision = \"ask\", reason = \"remembering needs a look\" }]\n"
        ),
        plugin_block(
            "reviewer",
            &format!(
                "[plugin.grants]\nmodel = true\nreview = true\n[plugin.config]\npolicy = \"{POLICY}\"\n"
            )
        ),
    );
    let config = config_text(&model.url(), &plugins)
        .replace("[agent]\n", &format!("[agent]\non_ask = \"{on_ask}\"\n"));
    TestHost::new(&config).await.expect("the host starts")
}

fn remember(command: &str) -> Reply {
    Reply::tool("remember", &json!({"key": "k", "value": 1, "command": command}).to_string())
}

/// (verdict, reason, arguments) of each `tool_reviewed`.
fn reviews(events: &[Event]) -> Vec<(ReviewOutcome, Option<String>, Value)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolReviewed { verdict, reason, arguments, reviewed_by, name, .. } => {
                assert!(reviewed_by.starts_with("reviewer@"), "{reviewed_by}");
                assert_eq!(name, "remember");
                Some((*verdict, reason.clone(), arguments.clone()))
            }
            _ => None,
        })
        .collect()
}

async fn turn(test: &TestHost, approver: &ScriptedApprover) {
    let session = test.session();
    let mut locked = session.lock().await;
    test.host.run_turn(&mut locked, "go", &*test.events, approver).await.unwrap();
}

#[tokio::test]
async fn a_call_the_reviewer_allows_runs_without_asking_the_operator() {
    let model = FakeModel::start().await;
    let test = host(&model, "deny").await;
    model.push(remember("make"));
    model.push(Reply::text(r#"{"decision": "allow", "reason": "building is allowed"}"#));
    model.push(Reply::text("remembered"));
    let approver = ScriptedApprover::new([]);
    turn(&test, &approver).await;
    assert!(approver.asked().is_empty(), "the operator was not asked");
    let review = &model.requests()[1];
    let asked = review["messages"].to_string();
    assert!(asked.contains(POLICY), "the reviewer holds the call to the config's policy: {asked}");
    assert!(asked.contains(r#"\"command\":\"make\""#), "and sees the exact call: {asked}");
    assert!(asked.contains("remembering needs a look"), "and why a person would be asked");
    let events = test.take_events();
    assert_eq!(
        reviews(&events),
        [(ReviewOutcome::Allow, None, json!({"key": "k", "value": 1, "command": "make"}))]
    );
    assert_eq!(decisions(&events).len(), 1);
    assert_eq!(decisions(&events)[0].0, CallDecision::AllowByReview);
    assert!(decisions(&events)[0].1.starts_with("reviewer@"));
    assert_eq!(tool_results(&events).len(), 1);
    assert!(tool_results(&events)[0].0, "the call ran");
}

#[tokio::test]
async fn a_call_the_reviewer_denies_is_refused_with_the_reason_the_model_reads() {
    let model = FakeModel::start().await;
    let test = host(&model, "allow").await;
    model.push(remember("rm -rf build"));
    model.push(Reply::text(r#"{"decision": "deny", "reason": "it deletes files"}"#));
    model.push(Reply::text("understood"));
    let approver = ScriptedApprover::new([]);
    turn(&test, &approver).await;
    assert!(approver.asked().is_empty(), "a denial is not put to the operator");
    let events = test.take_events();
    assert_eq!(reviews(&events)[0].0, ReviewOutcome::Deny);
    assert_eq!(reviews(&events)[0].1.as_deref(), Some("it deletes files"));
    let (ok, output) = tool_results(&events).remove(0);
    assert!(!ok);
    assert!(output.contains("it deletes files"), "{output}");
    let next = model.requests()[2]["messages"].to_string();
    assert!(next.contains("it deletes files"), "the model reads the reason: {next}");
}

#[tokio::test]
async fn a_failed_review_goes_to_the_operator_whose_always_binds_to_that_exact_call() {
    let model = FakeModel::start().await;
    let test = host(&model, "deny").await;
    let session = test.session();
    // The reviewer's model call is refused: an error, not a verdict.
    model.push(remember("make"));
    model.push(Reply::status(400));
    model.push(remember("make"));
    model.push(remember("make install"));
    model.push(Reply::text(r#"{"decision": "allow"}"#));
    model.push(Reply::text("done"));
    let approver = ScriptedApprover::new([ApprovalAnswer::AllowToolAlways]);
    {
        let mut locked = session.lock().await;
        test.host.run_turn(&mut locked, "go", &*test.events, &approver).await.unwrap();
    }
    assert_eq!(approver.asked().len(), 1, "asked once, after the failed review");
    assert!(
        approver.asked()[0].1.contains("failed"),
        "the question says the review failed: {:?}",
        approver.asked()
    );
    let events = test.take_events();
    let reviewed = reviews(&events);
    assert_eq!(reviewed.len(), 2, "the exact call answered always is not reviewed again: {reviewed:?}");
    assert_eq!(reviewed[0].0, ReviewOutcome::Error);
    assert!(reviewed[0].1.as_deref().unwrap().contains("the model could not be asked"), "{reviewed:?}");
    assert_eq!(reviewed[1].0, ReviewOutcome::Allow);
    assert_eq!(reviewed[1].2["command"], "make install", "other arguments are reviewed afresh");
    let decided: Vec<CallDecision> = decisions(&events).into_iter().map(|(decision, _)| decision).collect();
    assert_eq!(
        decided,
        [CallDecision::AllowExactAlways, CallDecision::AllowByReview],
        "an error is never a denial"
    );
    assert!(tool_results(&events).iter().all(|(ok, _)| *ok));
}

#[tokio::test]
async fn a_failed_review_with_nobody_to_ask_falls_to_on_ask_and_is_audited_as_an_error() {
    let model = FakeModel::start().await;
    let test = host(&model, "deny").await;
    model.push(remember("make"));
    model.push(Reply::text("I would rather not say."));
    model.push(Reply::text("ok"));
    let session = test.session();
    {
        let mut locked = session.lock().await;
        test.host.run_turn(&mut locked, "go", &*test.events, &NoOperator).await.unwrap();
    }
    let events = test.take_events();
    assert_eq!(reviews(&events)[0].0, ReviewOutcome::Error);
    assert!(reviews(&events)[0].1.as_deref().unwrap().contains("made no sense"));
    let (decision, by) = decisions(&events).remove(0);
    assert_eq!(decision, CallDecision::Deny);
    assert!(
        by.starts_with("permissions@"),
        "refused by agent.on_ask for the hook that asked, not by the reviewer: {by}"
    );
}
