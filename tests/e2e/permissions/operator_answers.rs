//! Operator approvals answered by a scripted approver during real turns: an "always" answer
//! holds for the session, "allow once" asks again, a deny reason reaches the model, and an
//! unanswerable request falls to `on_ask = "deny"`.

use agent_host::Event;
use agent_host::agent::ApprovalAnswer;
use agent_host::agent::SessionHandle;
use agent_host::events::CallDecision;

use super::host_with;
use crate::support::{FakeModel, Reply, ScriptedApprover, TestHost};

/// Runs one turn in which the model calls `touch` once, then finishes; returns what the
/// tool message said.
async fn touch_turn(
    test: &TestHost,
    model: &FakeModel,
    session: &SessionHandle,
    approver: &ScriptedApprover,
) -> String {
    model.push(Reply::tool("touch", "{}"));
    model.push(Reply::text("done"));
    test.host
        .run_turn(&mut *session.lock().await, "touch it", &*test.events, approver)
        .await
        .expect("the turn runs");
    let last = model.requests().last().cloned().expect("a request");
    let messages = last["messages"].as_array().unwrap().clone();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").expect("a tool message");
    tool["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn always_answers_persist_for_the_session() {
    for (always, decided) in [
        (ApprovalAnswer::AllowToolAlways, CallDecision::AllowToolAlways),
        (ApprovalAnswer::AllowExactAlways, CallDecision::AllowExactAlways),
    ] {
        let model = FakeModel::start().await;
        let test = host_with(&model, "", "").await;
        let session = test.session();
        let approver = ScriptedApprover::new([always.clone()]);
        assert_eq!(touch_turn(&test, &model, &session, &approver).await, "touched");
        assert_eq!(touch_turn(&test, &model, &session, &approver).await, "touched");
        assert_eq!(approver.asked_tools(), ["touch"], "{always:?}: asked once only");
        let events = test.take_events();
        assert!(events.iter().any(|e| matches!(e, Event::ApprovalRequested { name, .. } if name == "touch")));
        assert!(
            events.iter().any(|e| matches!(e, Event::ApprovalAnswered { answer, .. } if *answer == always))
        );
        assert!(
            events.iter().any(|e| matches!(e, Event::ToolDecision { decision, .. } if *decision == decided))
        );
    }
}

#[tokio::test]
async fn allow_once_asks_again_and_deny_reasons_reach_the_model() {
    let model = FakeModel::start().await;
    let test = host_with(&model, "", "").await;
    let session = test.session();
    let approver = ScriptedApprover::new([
        ApprovalAnswer::AllowOnce,
        ApprovalAnswer::Deny { reason: Some("not on a Friday".into()) },
    ]);
    assert_eq!(touch_turn(&test, &model, &session, &approver).await, "touched");
    let denied = touch_turn(&test, &model, &session, &approver).await;
    assert!(denied.contains("not on a Friday"), "{denied}");
    assert_eq!(approver.asked_tools(), ["touch", "touch"]);
    let answers: Vec<ApprovalAnswer> = test
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::ApprovalAnswered { answer, .. } => Some(answer),
            _ => None,
        })
        .collect();
    assert_eq!(
        answers,
        [ApprovalAnswer::AllowOnce, ApprovalAnswer::Deny { reason: Some("not on a Friday".into()) }]
    );
}

#[tokio::test]
async fn unanswerable_requests_fall_to_on_ask_deny() {
    let model = FakeModel::start().await;
    let test = host_with(&model, "", "").await;
    let session = test.session();
    let approver = ScriptedApprover::new([ApprovalAnswer::Unanswerable]);
    model.push(Reply::tool("touch", "{}"));
    model.push(Reply::text("done"));
    test.host
        .run_turn(&mut *session.lock().await, "touch it", &*test.events, &approver)
        .await
        .expect("the turn runs");
    assert_eq!(approver.asked_tools(), ["touch"]);
    let result = test
        .take_events()
        .into_iter()
        .find_map(|e| match e {
            Event::ToolResult { name, ok, output, .. } if name == "touch" => Some((ok, output)),
            _ => None,
        })
        .expect("a result for touch");
    assert!(!result.0, "{}", result.1);
    assert!(result.1.contains("nobody could answer") && result.1.contains("on_ask"), "{}", result.1);
}
