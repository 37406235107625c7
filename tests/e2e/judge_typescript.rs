//! A TypeScript plugin that judges (the `judge` export, contract 0.2.7, through the
//! TypeScript SDK's `onTurnEnd`, `onReview` and `onQueued`): `plugins/testing/judge-ts`,
//! built the way a deployment builds it, on componentize-js's engine and on QuickJS. Its
//! verdicts are read off what it is shown, so the fake model's replies script them: the model
//! is sent on, then stopped with a reason; a call the permissions policy would ask about is
//! denied with a message the model reads, or allowed; a hook that throws changes nothing it
//! should not (a failed review is never a verdict); a command queues a turn.

use agent_host::Event;
use agent_host::agent::{ApprovalAnswer, NoOperator, SessionHandle};
use agent_host::events::{CallDecision, ReviewOutcome, TurnEnd};
use serde_json::json;

use crate::support::judged::{continued, decision_kinds, decisions, stopped};
use crate::support::{
    FakeModel, Reply, ScriptedApprover, TestHost, component_block, config_text, last_user_text, plugin_block,
    quickjs_plugin_wasm, source_plugin_block, tool_results,
};

const FOLDER: &str = "testing/judge-ts";

/// Which engine the TypeScript plugin is built on.
#[derive(Debug, Clone, Copy)]
pub enum Engine {
    /// componentize-js's StarlingMonkey, the default.
    StarlingMonkey,
    QuickJs,
}

impl Engine {
    fn block(self, extra: &str) -> String {
        match self {
            Engine::StarlingMonkey => source_plugin_block(FOLDER, extra),
            Engine::QuickJs => component_block(&quickjs_plugin_wasm(FOLDER), extra),
        }
    }
}

/// Each named test, once per engine: `NAME::starlingmonkey`, `NAME::quickjs`.
macro_rules! on_both_engines {
    ($($test:ident),* $(,)?) => {$(
        mod $test {
            use super::Engine;
            #[tokio::test]
            async fn starlingmonkey() {
                super::$test(Engine::StarlingMonkey).await
            }
            #[tokio::test]
            async fn quickjs() {
                super::$test(Engine::QuickJs).await
            }
        }
    )*};
}

on_both_engines!(
    turn_end_sends_the_model_on_then_stops_the_turn_with_its_reason,
    a_turn_end_hook_that_throws_ends_the_turn_as_the_model_ended_it,
    review_denies_a_call_the_policy_asks_about_with_a_reason_the_model_reads,
    review_allows_a_call_without_asking_the_operator,
    a_review_that_throws_is_an_error_and_the_operator_decides,
    a_command_queues_the_turn_the_plugin_names,
);

/// The judge, after the permissions plugin asking about every `note` (with `on_ask`).
async fn host(model: &FakeModel, engine: Engine, on_ask: &str) -> TestHost {
    let plugins = format!(
        "{}{}",
        plugin_block(
            "permissions",
            "[plugin.config]\nrules = [{ tool = \"note\", decision = \"ask\", reason = \"notes need a look\" }]\n"
        ),
        engine.block("[plugin.grants]\nreview = true\nstart_turns = true\n"),
    );
    let config = config_text(&model.url(), &plugins)
        .replace("[agent]\n", &format!("[agent]\non_ask = \"{on_ask}\"\n"));
    TestHost::new(&config).await.expect("the host starts")
}

fn note(text: &str) -> Reply {
    Reply::tool("note", &json!({ "text": text }).to_string())
}

async fn turn(test: &TestHost, session: &SessionHandle, approver: &ScriptedApprover) -> TurnEnd {
    let mut locked = session.lock().await;
    test.host.run_turn(&mut locked, "go", &*test.events, approver).await.unwrap().end
}

/// (verdict, reason, reviewer) of each `tool_reviewed`.
fn reviews(events: &[Event]) -> Vec<(ReviewOutcome, Option<String>, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolReviewed { verdict, reason, reviewed_by, name, .. } => {
                assert_eq!(name, "note");
                Some((*verdict, reason.clone(), reviewed_by.clone()))
            }
            _ => None,
        })
        .collect()
}

fn ended(events: &[Event]) -> Vec<TurnEnd> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::TurnEnded { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}

async fn turn_end_sends_the_model_on_then_stops_the_turn_with_its_reason(engine: Engine) {
    let model = FakeModel::start().await;
    let test = host(&model, engine, "deny").await;
    let session = test.session();
    model.push(Reply::text("halfway there"));
    model.push(Reply::text("stuck: the tests need a database"));
    let end = turn(&test, &session, &ScriptedApprover::new([])).await;
    assert_eq!(end, TurnEnd::Blocked);
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "one continuation, then the stop: no third call");
    assert!(
        last_user_text(&requests[1]).contains("Keep going: finish it."),
        "the continuation is the model's next user message: {}",
        last_user_text(&requests[1])
    );
    let events = test.take_events();
    assert_eq!(continued(&events), [("judge-ts".to_owned(), "Keep going: finish it.".to_owned())]);
    assert_eq!(
        stopped(&events),
        [("judge-ts".to_owned(), TurnEnd::Blocked, "judge-ts: stuck: the tests need a database".to_owned())]
    );
    assert_eq!(ended(&events), [TurnEnd::Blocked]);

    // Another reason, typed through: the operator's input is needed.
    model.push(Reply::text("ask me which branch"));
    assert_eq!(turn(&test, &session, &ScriptedApprover::new([])).await, TurnEnd::NeedInput);
    let events = test.take_events();
    assert_eq!(
        stopped(&events),
        [("judge-ts".to_owned(), TurnEnd::NeedInput, "judge-ts needs the operator".to_owned())]
    );
    // A reply the judge has nothing to say about ends the turn as the model ended it.
    model.push(Reply::text("all done"));
    assert_eq!(turn(&test, &session, &ScriptedApprover::new([])).await, TurnEnd::Done);
    let events = test.take_events();
    assert!(continued(&events).is_empty() && stopped(&events).is_empty(), "{events:?}");
    assert_eq!(model.requests().len(), 4);
}

async fn a_turn_end_hook_that_throws_ends_the_turn_as_the_model_ended_it(engine: Engine) {
    let model = FakeModel::start().await;
    let test = host(&model, engine, "deny").await;
    let session = test.session();
    model.push(Reply::text("throw"));
    assert_eq!(turn(&test, &session, &ScriptedApprover::new([])).await, TurnEnd::Done);
    assert_eq!(model.requests().len(), 1, "a throw is not a continuation");
    let events = test.take_events();
    assert!(continued(&events).is_empty() && stopped(&events).is_empty(), "{events:?}");
    assert_eq!(ended(&events), [TurnEnd::Done]);
    // The plugin still judges the next turn.
    model.push(Reply::text("stuck again"));
    assert_eq!(turn(&test, &session, &ScriptedApprover::new([])).await, TurnEnd::Blocked);
    assert_eq!(model.requests().len(), 2);
}

async fn review_denies_a_call_the_policy_asks_about_with_a_reason_the_model_reads(engine: Engine) {
    let model = FakeModel::start().await;
    // Were the call put to `on_ask`, it would run: the denial is the judge's.
    let test = host(&model, engine, "allow").await;
    let session = test.session();
    model.push(note("rm -rf build"));
    model.push(Reply::text("understood"));
    let approver = ScriptedApprover::new([]);
    assert_eq!(turn(&test, &session, &approver).await, TurnEnd::Done);
    assert!(approver.asked().is_empty(), "a denial is not put to the operator");
    let events = test.take_events();
    let reviewed = reviews(&events);
    assert_eq!(reviewed.len(), 1, "{reviewed:?}");
    let (verdict, reason, by) = &reviewed[0];
    assert_eq!(*verdict, ReviewOutcome::Deny);
    assert!(by.starts_with("judge-ts@"), "{by}");
    let reason = reason.as_deref().unwrap();
    assert_eq!(
        reason, "judge-ts refuses `rm -rf build` (notes need a look)",
        "the review saw why it was asked"
    );
    assert_eq!(decisions(&events).len(), 1);
    assert_eq!(decisions(&events)[0].0, CallDecision::Deny);
    let (ok, output) = tool_results(&events).remove(0);
    assert!(!ok, "the call did not run: {output}");
    assert!(output.contains(reason), "{output}");
    assert!(!output.contains("noted"), "{output}");
    let next = model.requests()[1]["messages"].to_string();
    assert!(next.contains("judge-ts refuses"), "the model reads the reason: {next}");
}

async fn review_allows_a_call_without_asking_the_operator(engine: Engine) {
    let model = FakeModel::start().await;
    let test = host(&model, engine, "deny").await;
    let session = test.session();
    model.push(note("make"));
    model.push(note("something else"));
    model.push(Reply::text("done"));
    // The second call is abstained on: the operator is asked, and allows it once.
    let approver = ScriptedApprover::new([ApprovalAnswer::AllowOnce]);
    assert_eq!(turn(&test, &session, &approver).await, TurnEnd::Done);
    assert_eq!(approver.asked().len(), 1, "asked only about the call the judge abstained on");
    let events = test.take_events();
    let verdicts: Vec<ReviewOutcome> = reviews(&events).into_iter().map(|(verdict, ..)| verdict).collect();
    assert_eq!(verdicts, [ReviewOutcome::Allow, ReviewOutcome::Abstain]);
    assert_eq!(decision_kinds(&events), [CallDecision::AllowByReview, CallDecision::AllowOnce]);
    assert_eq!(
        tool_results(&events),
        [(true, "noted: make".to_owned()), (true, "noted: something else".to_owned())]
    );
}

async fn a_review_that_throws_is_an_error_and_the_operator_decides(engine: Engine) {
    let model = FakeModel::start().await;
    let test = host(&model, engine, "deny").await;
    let session = test.session();
    model.push(note("throw it"));
    model.push(Reply::text("ok"));
    {
        let mut locked = session.lock().await;
        test.host.run_turn(&mut locked, "go", &*test.events, &NoOperator).await.unwrap();
    }
    let events = test.take_events();
    let reviewed = reviews(&events);
    assert_eq!(reviewed.len(), 1, "{reviewed:?}");
    assert_eq!(reviewed[0].0, ReviewOutcome::Error, "a throw is never a verdict");
    let reason = reviewed[0].1.as_deref().unwrap();
    assert!(reason.contains("the review hook broke"), "{reason}");
    let (decision, by) = decisions(&events).remove(0);
    assert_eq!(decision, CallDecision::Deny);
    assert!(
        by.starts_with("permissions@"),
        "refused by agent.on_ask for the hook that asked, not the judge: {by}"
    );
    assert!(!tool_results(&events)[0].0);
}

async fn a_command_queues_the_turn_the_plugin_names(engine: Engine) {
    let model = FakeModel::start().await;
    let test = host(&model, engine, "deny").await;
    let session = test.session();
    let mut locked = session.lock().await;
    test.host.command(&mut locked, "/work fix the parser", &*test.events).await.expect("the command runs");
    let queued = test.host.queued_turn(&mut locked, &*test.events).await;
    assert_eq!(queued.as_deref(), Some("Work on: fix the parser"));
    let events = test.take_events();
    assert!(
        events.iter().any(|e| matches!(e, Event::TurnQueued { plugin, .. } if plugin == "judge-ts")),
        "{events:?}"
    );
}
