//! A judge written in Python (`plugins/testing/judge-py`, on the Python SDK's `judge` export,
//! contract 0.2.7) reaches the host like a Rust one: its `turn-end` sends the model on with
//! its text and stops a turn with its reason, its `review` refuses a call the permission
//! policy would ask about (the model reads why, the call does not run) or approves one, a
//! review that raises is a failed review the operator decides (never a denial), and its
//! `queued` runs a turn after an operator command.

use agent_host::Event;
use agent_host::agent::{ApprovalAnswer, NoOperator, SessionHandle};
use agent_host::events::{CallDecision, ReviewOutcome, TurnEnd};
use serde_json::{Value, json};

use crate::support::judged::{continued, decision_kinds, stopped};
use crate::support::{
    FakeModel, Reply, ScriptedApprover, TestHost, config_text, last_user_text, plugin_block,
    source_plugin_block, tool_results,
};

const ASKED: &str = "notes need a look";

/// The `permissions` plugin asking about every `note`, beside `judge-py`.
async fn host(model: &FakeModel) -> TestHost {
    let rules = format!(
        "[plugin.config]\nrules = [{{ tool = \"note\", decision = \"ask\", reason = \"{ASKED}\" }}]\n"
    );
    let plugins = format!(
        "{}{}",
        plugin_block("permissions", &rules),
        source_plugin_block("testing/judge-py", "[plugin.grants]\nreview = true\nstart_turns = true\n")
    );
    let config = config_text(&model.url(), &plugins).replace("[agent]\n", "[agent]\non_ask = \"deny\"\n");
    TestHost::new(&config).await.expect("the host starts")
}

fn note(text: &str) -> Reply {
    Reply::tool("note", &json!({ "text": text }).to_string())
}

/// (verdict, reason) of each `tool_reviewed`, all by judge-py.
fn reviews(events: &[Event]) -> Vec<(ReviewOutcome, Option<String>)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolReviewed { verdict, reason, reviewed_by, name, .. } => {
                assert!(reviewed_by.starts_with("judge-py@"), "{reviewed_by}");
                assert_eq!(name, "note");
                Some((*verdict, reason.clone()))
            }
            _ => None,
        })
        .collect()
}

async fn notes(session: &SessionHandle) -> Option<Value> {
    session.lock().await.bag().get_json("judge-py", "notes")
}

#[tokio::test]
async fn turn_end_sends_the_model_on_once_then_stops_the_turn_with_its_reason() {
    let model = FakeModel::start().await;
    let test = host(&model).await;
    let session = test.session();
    model.push(Reply::text("Draft: the parser is fixed."));
    model.push(Reply::text("Stuck: which branch?"));
    model.push(Reply::text("never asked"));
    let outcome = test.turn(&session, "fix the parser").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::NeedInput);
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "one continuation, then the stop");
    assert!(
        last_user_text(&requests[1]).contains("Check the draft once more: Draft: the parser is fixed."),
        "the continuation is the next user message: {}",
        last_user_text(&requests[1])
    );
    let events = test.take_events();
    assert_eq!(
        continued(&events),
        [("judge-py".to_owned(), "Check the draft once more: Draft: the parser is fixed.".to_owned())]
    );
    assert_eq!(
        stopped(&events),
        [(
            "judge-py".to_owned(),
            TurnEnd::NeedInput,
            "judge-py needs the operator: Stuck: which branch?".to_owned()
        )]
    );
}

#[tokio::test]
async fn a_reply_the_judge_has_no_opinion_on_ends_the_turn_as_the_model_ended_it() {
    let model = FakeModel::start().await;
    let test = host(&model).await;
    let session = test.session();
    model.push(Reply::text("All done."));
    let outcome = test.turn(&session, "go").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::Done);
    assert_eq!(model.requests().len(), 1);
    let events = test.take_events();
    assert!(!events.iter().any(|e| matches!(e, Event::Continued { .. } | Event::TurnStopped { .. })));
}

#[tokio::test]
async fn review_refuses_a_call_the_policy_asks_about_with_a_reason_the_model_reads() {
    let model = FakeModel::start().await;
    let test = host(&model).await;
    let session = test.session();
    model.push(note("delete the build folder"));
    model.push(note("buy milk"));
    model.push(Reply::text("understood"));
    let approver = ScriptedApprover::new([]);
    {
        let mut locked = session.lock().await;
        test.host.run_turn(&mut locked, "go", &*test.events, &approver).await.unwrap();
    }
    assert!(approver.asked().is_empty(), "the reviewer decided both calls; the operator was not asked");
    let refusal = format!("judge-py refuses deleting ({ASKED})");
    let events = test.take_events();
    assert_eq!(
        reviews(&events),
        [(ReviewOutcome::Deny, Some(refusal.clone())), (ReviewOutcome::Allow, None)],
        "the review sees why the policy asks"
    );
    assert_eq!(decision_kinds(&events), [CallDecision::Deny, CallDecision::AllowByReview]);
    let results = tool_results(&events);
    assert!(!results[0].0 && results[0].1.contains(&refusal), "{results:?}");
    assert_eq!(results[1], (true, "noted: buy milk".to_owned()));
    let next = model.requests()[1]["messages"].to_string();
    assert!(next.contains(&refusal), "the model reads the reason as the tool's error: {next}");
    assert_eq!(notes(&session).await, Some(json!(["buy milk"])), "the refused call did not run");
}

#[tokio::test]
async fn a_review_that_raises_is_a_failed_review_the_operator_decides() {
    let model = FakeModel::start().await;
    let test = host(&model).await;
    let session = test.session();
    // The operator allows it: a raising review is not a denial.
    model.push(note("crash"));
    model.push(Reply::text("ok"));
    let approver = ScriptedApprover::new([ApprovalAnswer::AllowOnce]);
    {
        let mut locked = session.lock().await;
        test.host.run_turn(&mut locked, "go", &*test.events, &approver).await.unwrap();
    }
    assert_eq!(approver.asked().len(), 1, "asked after the failed review: {:?}", approver.asked());
    let events = test.take_events();
    let reviewed = reviews(&events);
    assert_eq!(reviewed.len(), 1);
    assert_eq!(reviewed[0].0, ReviewOutcome::Error);
    let reason = reviewed[0].1.clone().unwrap_or_default();
    assert_eq!(reason, "RuntimeError: the review broke on purpose");
    assert_eq!(decision_kinds(&events), [CallDecision::AllowOnce]);
    assert_eq!(tool_results(&events), [(true, "noted: crash".to_owned())]);
    assert_eq!(notes(&session).await, Some(json!(["crash"])));

    // With nobody to ask, `agent.on_ask` (deny here) decides, for the policy that asked.
    model.push(note("crash"));
    model.push(Reply::text("ok"));
    {
        let mut locked = session.lock().await;
        test.host.run_turn(&mut locked, "again", &*test.events, &NoOperator).await.unwrap();
    }
    let events = test.take_events();
    assert_eq!(reviews(&events)[0].0, ReviewOutcome::Error);
    assert_eq!(decision_kinds(&events), [CallDecision::Deny]);
    assert_eq!(notes(&session).await, Some(json!(["crash"])), "the refused call did not run");
}

#[tokio::test]
async fn a_command_queues_a_turn_through_queued_once() {
    let model = FakeModel::start().await;
    let test = host(&model).await;
    let session = test.session();
    let mut locked = session.lock().await;
    assert_eq!(test.host.queued_turn(&mut locked, &*test.events).await, None, "nothing planned yet");
    let answer = test.host.command(&mut locked, "/plan port the lexer", &*test.events).await;
    assert_eq!(answer.as_deref(), Ok("planned: port the lexer"));
    let queued = test.host.queued_turn(&mut locked, &*test.events).await;
    assert_eq!(queued.as_deref(), Some("Work on the plan: port the lexer"));
    let events = test.take_events();
    let turn_queued: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::TurnQueued { plugin, prompt } => Some((plugin.clone(), prompt.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(turn_queued, [("judge-py".to_owned(), "Work on the plan: port the lexer".to_owned())]);
    // `queued` removed the plan from its state: the next command queues nothing.
    test.host.command(&mut locked, "/help", &*test.events).await.unwrap();
    assert_eq!(test.host.queued_turn(&mut locked, &*test.events).await, None);
}
