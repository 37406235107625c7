use agent_host_sdk::judge::{StopReason, StopVerdict, TurnVerdict};
use agent_host_sdk::meter::SessionReading;
use agent_host_sdk::model::{ChatMessage, CompleteOptions, Completion};
use agent_host_sdk::testing::{self, Harness};
use serde_json::json;

use super::*;

fn harness() -> Harness<Config> {
    Harness::new(plugin(), json!({})).unwrap()
}

fn session_tokens(tokens: u64) {
    testing::set_session_meter(SessionReading { tokens, model_calls: 0 });
}

fn judge_says(answer: fn(&[ChatMessage], &CompleteOptions) -> Result<Completion, String>) {
    testing::on_model(answer);
}

fn goal() -> Goal {
    testing::stored(KEY).map(|value| serde_json::from_value(value).unwrap()).expect("a goal is stored")
}

fn not_yet_with_progress(_: &[ChatMessage], _: &CompleteOptions) -> Result<Completion, String> {
    Ok(Completion {
        text: r#"{"verdict": "continue", "progress": true, "next": "write the tests"}"#.into(),
        input_tokens: 40,
        output_tokens: 10,
    })
}

fn not_yet_stalled(_: &[ChatMessage], _: &CompleteOptions) -> Result<Completion, String> {
    Ok(Completion {
        text: r#"{"verdict": "continue", "progress": false}"#.into(),
        input_tokens: 40,
        output_tokens: 10,
    })
}

fn done(_: &[ChatMessage], _: &CompleteOptions) -> Result<Completion, String> {
    Ok(Completion { text: "Sure. {\"verdict\": \"done\"}".into(), input_tokens: 30, output_tokens: 5 })
}

#[test]
fn a_goal_set_queues_one_turn_and_is_judged_on_until_done() {
    let plugin = harness();
    session_tokens(1_000);
    assert_eq!(plugin.command("goal", "Make the tests pass").unwrap(), "goal set: Make the tests pass");
    assert_eq!(plugin.queued().as_deref(), Some("Work toward this goal: Make the tests pass"));
    assert_eq!(plugin.queued(), None, "queued once");

    judge_says(not_yet_with_progress);
    session_tokens(1_300);
    let verdict = plugin.turn_end("I fixed the parser.");
    assert_eq!(
        verdict,
        TurnVerdict::Continue(
            "Keep working toward the goal: Make the tests pass. Next: write the tests".into()
        )
    );
    assert_eq!(goal().tokens_used, 300 + 50, "the session's 300 and the judge's own 50");
    let (asked, options) = testing::take_model_requests().remove(0);
    assert!(asked[1].content.contains("Objective: Make the tests pass"), "{asked:?}");
    assert!(asked[1].content.contains("I fixed the parser."), "{asked:?}");
    assert_eq!(options.max_output_tokens, Some(200));

    judge_says(done);
    assert_eq!(plugin.turn_end("All green."), TurnVerdict::End);
    assert_eq!(goal().status, Status::Complete);
    assert_eq!(plugin.turn_end("Anything else?"), TurnVerdict::End, "a complete goal judges nothing");
    assert_eq!(testing::take_model_requests().len(), 1, "no judge call once complete");
}

#[test]
fn the_goal_stops_at_its_token_budget_counting_the_judges_tokens() {
    let plugin = harness();
    session_tokens(0);
    plugin.command("goal", "--tokens 1000 Ship it").unwrap();
    judge_says(not_yet_with_progress);
    session_tokens(949);
    // 949 spent before the judge, 50 by it: one short.
    assert!(matches!(plugin.turn_end("step"), TurnVerdict::Continue(_)));
    assert_eq!(goal().tokens_used, 999);
    session_tokens(950);
    // 950 + 50 = 1000: exactly the budget.
    let stopped = plugin.turn_end("step");
    assert_eq!(
        stopped,
        TurnVerdict::Stop(StopVerdict {
            reason: StopReason::TokenBudget,
            message: "the goal spent its 1,000 tokens: Ship it".into()
        })
    );
    assert_eq!(goal().status, Status::BudgetReached);
    assert_eq!(goal().tokens_used, 1_000);
}

#[test]
fn stalls_block_the_goal_after_max_stalls_and_progress_resets_them() {
    let plugin = Harness::new(plugin(), json!({"max_stalls": 2})).unwrap();
    plugin.command("goal", "Refactor").unwrap();
    judge_says(not_yet_stalled);
    assert!(matches!(plugin.turn_end("hmm"), TurnVerdict::Continue(_)));
    judge_says(not_yet_with_progress);
    assert!(matches!(plugin.turn_end("moved"), TurnVerdict::Continue(_)));
    assert_eq!(goal().stalls, 0);
    judge_says(not_yet_stalled);
    assert!(matches!(plugin.turn_end("hmm"), TurnVerdict::Continue(_)));
    let TurnVerdict::Stop(stop) = plugin.turn_end("hmm") else { panic!("blocked after two stalls") };
    assert_eq!(stop.reason, StopReason::Blocked);
    assert_eq!(stop.message, "the goal is blocked: no progress in 2 judgements in a row");
    assert_eq!(goal().status, Status::Blocked);
}

#[test]
fn a_judge_that_talks_nonsense_counts_as_a_stall_and_one_that_fails_ends_the_turn() {
    let plugin = Harness::new(plugin(), json!({"max_stalls": 1})).unwrap();
    plugin.command("goal", "Tidy").unwrap();
    testing::on_model(|_, _| Err("the grant gives no model".into()));
    assert_eq!(plugin.turn_end("x"), TurnVerdict::End);
    assert_eq!(goal().status, Status::Active, "a failed judgement changes nothing");
    testing::on_model(|_, _| {
        Ok(Completion { text: "I think so?".into(), input_tokens: 1, output_tokens: 1 })
    });
    assert!(matches!(
        plugin.turn_end("x"),
        TurnVerdict::Stop(StopVerdict { reason: StopReason::Blocked, .. })
    ));
}

#[test]
fn pause_resume_and_clear() {
    let plugin = harness();
    assert_eq!(plugin.command("goal", "pause").unwrap_err(), "no active goal to pause");
    plugin.command("goal", "Write docs").unwrap();
    plugin.queued();
    plugin.command("goal", "pause").unwrap();
    assert_eq!(plugin.turn_end("x"), TurnVerdict::End, "a paused goal is not judged");
    assert_eq!(plugin.queued(), None);
    assert_eq!(plugin.command("goal", "resume").unwrap(), "goal resumed: Write docs");
    assert_eq!(plugin.queued().as_deref(), Some("Work toward this goal: Write docs"));
    assert!(plugin.status().unwrap().starts_with("goal: active"));
    plugin.command("goal", "clear").unwrap();
    assert_eq!(plugin.status(), None);
    assert_eq!(plugin.queued(), None);
    assert!(plugin.view().is_empty());
}

#[test]
fn a_resumed_goal_goes_on_counting_from_what_it_had_spent() {
    let plugin = harness();
    session_tokens(100);
    plugin.command("goal", "--tokens 5k Port it").unwrap();
    judge_says(not_yet_with_progress);
    session_tokens(600);
    plugin.turn_end("x");
    assert_eq!(goal().tokens_used, 550);
    plugin.command("goal", "pause").unwrap();
    // Spent elsewhere while paused: not the goal's.
    session_tokens(10_000);
    plugin.command("goal", "resume").unwrap();
    session_tokens(10_100);
    plugin.turn_end("x");
    assert_eq!(goal().tokens_used, 550 + 100 + 50);
}

#[test]
fn the_view_shows_the_objective_its_status_and_its_budget() {
    let plugin = harness();
    plugin.command("goal", "--tokens 2000 Fix it").unwrap();
    let view = serde_json::to_value(format!("{:?}", plugin.view())).unwrap().to_string();
    assert!(view.contains("Fix it"), "{view}");
    assert!(view.contains("active · 0 of 2,000 tokens"), "{view}");
}

#[test]
fn bad_arguments_and_config_are_refused_naming_what() {
    let plugin = harness();
    assert!(
        plugin
            .command("goal", "--tokens lots Fix")
            .unwrap_err()
            .contains("`--tokens lots` is not a token count")
    );
    assert!(plugin.command("goal", "--time 5y Fix").unwrap_err().contains("`--time 5y` is not a duration"));
    assert!(plugin.command("goal", "--tokens 10").unwrap_err().contains("no objective"));
    assert!(plugin.command("goal", "--budget 10 Fix").unwrap_err().contains("unknown option `--budget`"));
    let error = Harness::new(super::plugin(), json!({"max_stalls": 0})).err().unwrap();
    assert!(error.contains("max_stalls"), "{error}");
}
