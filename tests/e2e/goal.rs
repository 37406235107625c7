//! The `goal` plugin on the host's judge primitives (contract 0.2.7): a goal set by a command
//! queues its first turn; the judge — a `model.complete` call of the plugin, counted by the
//! host's meter — sends the model on until it finds the goal done, blocked, or out of its own
//! budget; the operator's input pre-empts a continuation; and the goal, kept in the session,
//! survives a host killed mid-turn. Scripted through the fake endpoint, whose replies serve
//! the turn's calls and the judge's alike, in order.

use std::sync::Arc;

use agent_host::Event;
use agent_host::events::TurnEnd;
use serde_json::Value;

use crate::support::judged::stopped;
use crate::support::{
    FakeModel, Reply, TestHost, config_text, json_prompt_command, last_user_text, plugin_block,
};

/// The judge asks the model; `queued` starts the goal's turns after its command.
const GRANT: &str = "[plugin.grants]\nmodel = true\nstart_turns = true\n";

async fn host(model: &FakeModel, config: &str) -> TestHost {
    let block = plugin_block("goal", &format!("{GRANT}{config}"));
    TestHost::new(&config_text(&model.url(), &block)).await.expect("the host starts")
}

fn judge(verdict: &str, progress: bool) -> Reply {
    Reply::text(&format!(
        r#"{{"verdict": "{verdict}", "progress": {progress}, "next": "finish the parser"}}"#
    ))
}

/// Runs `/goal ARGS` on `session` and returns the turn it queued.
async fn set_goal(test: &TestHost, session: &agent_host::agent::SessionHandle, args: &str) -> Option<String> {
    let mut locked = session.lock().await;
    test.host.command(&mut locked, &format!("/goal {args}"), &*test.events).await.expect("the command runs");
    test.host.queued_turn(&mut locked, &*test.events).await
}

#[tokio::test]
async fn a_goal_set_by_command_works_until_the_judge_finds_it_done() {
    let model = FakeModel::start().await;
    let test = host(&model, "").await;
    let session = test.session();
    let queued = set_goal(&test, &session, "Make the tests pass").await;
    assert_eq!(queued.as_deref(), Some("Work toward this goal: Make the tests pass"));
    model.push(Reply::text("I fixed the parser."));
    model.push(judge("continue", true));
    model.push(Reply::text("All tests pass now."));
    model.push(Reply::text(r#"{"verdict": "done"}"#));
    let outcome = test.turn(&session, &queued.unwrap()).await.unwrap();
    assert_eq!(outcome.end, TurnEnd::Done);
    let requests = model.requests();
    assert_eq!(requests.len(), 4, "two turn calls, two judgements");
    assert!(
        last_user_text(&requests[1]).contains("Objective: Make the tests pass"),
        "the judge sees the goal"
    );
    assert!(last_user_text(&requests[1]).contains("I fixed the parser."), "and the reply it judges");
    assert!(
        last_user_text(&requests[2])
            .contains("Keep working toward the goal: Make the tests pass. Next: finish the parser"),
        "the continuation is the next user message: {}",
        last_user_text(&requests[2])
    );
    let events = test.take_events();
    assert!(events.iter().any(|e| matches!(e, Event::TurnQueued { plugin, .. } if plugin == "goal")));
    let continued =
        events.iter().filter(|e| matches!(e, Event::Continued { plugin, .. } if plugin == "goal")).count();
    assert_eq!(continued, 1);
    // The view says so, and the next command queues nothing: the goal is complete.
    let locked = session.lock().await;
    let view = format!("{:?}", locked.views().current());
    assert!(view.contains("complete"), "{view}");
    drop(locked);
    assert_eq!(set_goal(&test, &session, "").await, None, "`/goal` shows it and queues nothing");
}

#[tokio::test]
async fn a_goal_stops_at_its_token_budget_exactly_with_the_judges_tokens_counted() {
    let model = FakeModel::start().await;
    let test = host(&model, "").await;
    let session = test.session();
    let queued = set_goal(&test, &session, "--tokens 1000 Port the parser").await.unwrap();
    // The turn's call spends 700; the judge's own 300 makes exactly 1,000.
    model.push(Reply::text("Half done.").usage(600, 0, 100));
    model.push(judge("continue", true).usage(250, 0, 50));
    model.push(Reply::text("never asked"));
    let outcome = test.turn(&session, &queued).await.unwrap();
    assert_eq!(outcome.end, TurnEnd::TokenBudget);
    assert_eq!(model.requests().len(), 2, "no call past the goal's budget");
    let events = test.take_events();
    assert_eq!(
        stopped(&events),
        [(
            "goal".to_owned(),
            TurnEnd::TokenBudget,
            "the goal spent its 1,000 tokens: Port the parser".to_owned()
        )]
    );
    let ended = events.iter().find_map(|e| match e {
        Event::TurnEnded { reason, tokens, .. } => Some((*reason, *tokens)),
        _ => None,
    });
    assert_eq!(ended, Some((TurnEnd::TokenBudget, 1_000)), "the host's meter agrees with the goal's");
}

/// Against an endpoint that reports no usage, the turn's own calls are charged the host's
/// estimate, and the session keeps it (`meter.session`): a reply of 9,200 bytes (about 2,300
/// tokens at the 4 bytes a token the host counts by here) spends a goal of 2,000 before its
/// judge is asked. Counted as nothing, only the judge's calls counted, and the turn went on.
#[tokio::test]
async fn a_goals_token_budget_holds_against_an_endpoint_that_reports_no_usage() {
    let model = FakeModel::start().await;
    let test = host(&model, "").await;
    let session = test.session();
    let queued = set_goal(&test, &session, "--tokens 2000 Port the parser").await.unwrap();
    for _ in 0..3 {
        model.push(Reply::text(&"word ".repeat(1_840)));
        model.push(judge("continue", true));
    }
    let outcome = test.turn(&session, &queued).await.unwrap();
    assert_eq!(outcome.end, TurnEnd::TokenBudget);
    assert_eq!(model.requests().len(), 1, "the first reply spent the goal; no judge was asked");
    let events = test.take_events();
    assert_eq!(
        stopped(&events),
        [(
            "goal".to_owned(),
            TurnEnd::TokenBudget,
            "the goal spent its 2,000 tokens: Port the parser".to_owned()
        )]
    );
    let ended = events.iter().find(|e| matches!(e, Event::TurnEnded { .. })).map(serde_json::to_value);
    let ended = ended.expect("the turn ended").unwrap();
    assert!(ended["tokens"].as_u64().unwrap() >= 2_300, "{ended}");
    assert_eq!(ended["estimated"], true, "{ended}");
}

#[tokio::test]
async fn a_goal_that_makes_no_progress_is_blocked_after_max_stalls_judgements() {
    let model = FakeModel::start().await;
    let test = host(&model, "[plugin.config]\nmax_stalls = 2\n").await;
    let session = test.session();
    let queued = set_goal(&test, &session, "Find the bug").await.unwrap();
    model.push(Reply::text("Looking."));
    model.push(judge("continue", false));
    model.push(Reply::text("Still looking."));
    model.push(judge("continue", false));
    model.push(Reply::text("never asked"));
    let outcome = test.turn(&session, &queued).await.unwrap();
    assert_eq!(outcome.end, TurnEnd::Blocked);
    assert_eq!(model.requests().len(), 4);
    let message = test.take_events().into_iter().find_map(|e| match e {
        Event::TurnStopped { message, .. } => Some(message),
        _ => None,
    });
    assert_eq!(message.as_deref(), Some("the goal is blocked: no progress in 2 judgements in a row"));
}

#[tokio::test]
async fn the_operators_input_preempts_a_continuation_and_the_next_turn_is_theirs() {
    let model = FakeModel::start().await;
    let test = host(&model, "").await;
    let session = test.session();
    let queued = set_goal(&test, &session, "Write the docs").await.unwrap();
    let input = session.lock().await.input_waiting().clone();
    let gate = Arc::new(tokio::sync::Notify::new());
    model.push(Reply::text("Wrote the intro.").held_until(&gate));
    model.push(judge("continue", true));
    model.push(Reply::text("never asked"));
    let turn = {
        let (test_host, events, session) = (test.host.clone(), test.events.clone(), session.clone());
        tokio::spawn(async move {
            let mut locked = session.lock().await;
            test_host.run_turn(&mut locked, &queued, &*events, &agent_host::agent::NoOperator).await
        })
    };
    while model.requests().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // What a front end does when the operator sends something while the turn runs.
    input.mark();
    gate.notify_one();
    let outcome = turn.await.unwrap().unwrap();
    assert_eq!(outcome.end, TurnEnd::Done, "the turn ends instead of going on");
    assert_eq!(model.requests().len(), 2, "the turn's call and the judge's, no continuation");
    let events = test.take_events();
    assert!(events.iter().any(|e| matches!(e, Event::ContinuationPreempted { plugin } if plugin == "goal")));
    assert!(!events.iter().any(|e| matches!(e, Event::Continued { .. })));
    // The operator's turn runs next, and its own continuations are granted again.
    model.push(Reply::text("Here is the outline you asked for."));
    model.push(Reply::text(r#"{"verdict": "done"}"#));
    assert_eq!(test.turn(&session, "show me the outline").await.unwrap().end, TurnEnd::Done);
}

#[tokio::test]
async fn a_goal_survives_a_host_killed_mid_turn_and_resumes_in_the_next() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    let block = plugin_block("goal", GRANT);
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), &block)).unwrap();
    model.push(Reply::text("Ported the lexer.").usage(100, 0, 20));
    model.push(judge("continue", true).usage(30, 0, 10));
    model.push(Reply::hang());
    let mut first =
        json_prompt_command(dir.path(), None, "/goal --tokens 50k Port the parser").spawn().unwrap();
    let stdout = first.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let mut session_id = None;
    while let Some(line) = lines.next_line().await.unwrap() {
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["type"] == "session_started" {
            session_id = event["session_id"].as_str().map(str::to_owned);
        }
        if event["type"] == "continued" {
            break;
        }
    }
    while model.requests().len() < 3 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // kill -9 while the continuation's model call is out.
    first.start_kill().unwrap();
    first.wait().await.unwrap();
    let session_id = session_id.expect("the first run said its session");

    model.push(Reply::text("Ported the parser."));
    model.push(Reply::text(r#"{"verdict": "done"}"#));
    let second = json_prompt_command(dir.path(), Some(&session_id), "/goal resume").output().await.unwrap();
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    assert!(String::from_utf8_lossy(&second.stderr).contains("goal resumed: Port the parser"));
    let events: Vec<Value> = String::from_utf8_lossy(&second.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let queued = events.iter().find(|e| e["type"] == "turn_queued").expect("the resume queued a turn");
    assert_eq!(queued["prompt"], "Work toward this goal: Port the parser");
    let complete = events
        .iter()
        .find(|e| {
            e["type"] == "plugin" && e["kind"] == "goal_changed" && e["payload"]["status"] == "complete"
        })
        .expect("the goal completes in the second process");
    // What the first process spent before the kill stayed the goal's: 120 + 40.
    assert!(complete["payload"]["tokens_used"].as_u64().unwrap() >= 160, "{complete}");
    assert_eq!(events.last().unwrap()["reason"], "done");
}

/// A `serve` host whose goal, set over HTTP by alice, has its turn running: its first model
/// call is held until `gate` is notified, and the judge then asks to go on.
async fn goal_turn_running_over_http(
    model: &FakeModel,
    gate: &Arc<tokio::sync::Notify>,
) -> (crate::support::serve::Server, String) {
    model.push(Reply::text("Drafted the intro.").held_until(gate));
    model.push(judge("continue", true));
    let server =
        crate::support::serve::serve(model, &plugin_block("goal", GRANT), "plugin_commands = [\"goal\"]\n")
            .await;
    let session = server.new_session("alice").await;
    let (status, body) = server
        .post(
            "alice",
            &format!("/v1/sessions/{session}/commands"),
            serde_json::json!({"line": "/goal Write the docs"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    assert_eq!(body["output"], "goal set: Write the docs");
    assert!(body["turn"]["turn"].is_string(), "the queued turn started: {body}");
    while model.requests().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    (server, session)
}

/// Alice's POST of `body` to the session's `route` while its turn runs: refused with 409,
/// saying the turn ends at its next continuation.
async fn refused_while_running(
    server: &crate::support::serve::Server,
    session: &str,
    route: &str,
    body: Value,
) {
    let (status, body) = server.post("alice", &format!("/v1/sessions/{session}/{route}"), body).await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{body}");
    assert!(body["error"].as_str().unwrap().contains("ends at its next one"), "{body}");
}

/// Releases the held model call and returns the events of the goal's turn, checked to have
/// ended without the continuation its judge asked for.
async fn preempted_turn(
    server: &crate::support::serve::Server,
    session: &str,
    gate: &tokio::sync::Notify,
) -> Vec<(u64, Value)> {
    gate.notify_one();
    let events = server.events_until("alice", session, None, |event| event["type"] == "turn_ended").await;
    let kinds: Vec<&str> = events.iter().map(|(_, event)| event["type"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"continuation_preempted"), "{kinds:?}");
    assert!(!kinds.contains(&"continued"), "{kinds:?}");
    assert_eq!(events.last().unwrap().1["reason"], "done");
    events
}

#[tokio::test]
async fn over_http_a_goal_command_starts_its_turn_and_a_prompt_sent_meanwhile_preempts_it() {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    let (server, session) = goal_turn_running_over_http(&model, &gate).await;
    // The operator writes while the goal's turn runs: refused for now, and the turn yields.
    refused_while_running(&server, &session, "messages", serde_json::json!({"text": "stop there"})).await;
    let events = preempted_turn(&server, &session, &gate).await;
    assert!(events.iter().any(|(_, event)| event["type"] == "turn_queued"), "{events:?}");
    assert_eq!(model.requests().len(), 2, "the turn's call and the judge's");
    // Now the operator's prompt runs.
    model.push(Reply::text("Stopped; here is where things stand."));
    model.push(Reply::text(r#"{"verdict": "done"}"#));
    let events = server.turn_events("alice", &session, "stop there").await;
    assert_eq!(events.last().unwrap().1["reason"], "done");
}

#[tokio::test]
async fn over_http_a_command_sent_while_a_goal_turn_runs_preempts_it_too() {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    let (server, session) = goal_turn_running_over_http(&model, &gate).await;
    // A command is the operator's input as much as a prompt is: refused while the turn
    // runs, and the turn grants no further continuation.
    refused_while_running(&server, &session, "commands", serde_json::json!({"line": "/goal pause"})).await;
    preempted_turn(&server, &session, &gate).await;
    assert_eq!(model.requests().len(), 2, "the turn's call and the judge's, no continuation");
}

#[tokio::test]
async fn a_forked_session_carries_the_goal_and_each_goes_its_own_way() {
    let model = FakeModel::start().await;
    let test = host(&model, "").await;
    let session = test.session();
    set_goal(&test, &session, "--tokens 20k Split the module").await.unwrap();
    let id = session.lock().await.id().to_owned();
    let fork = test.host.sessions().fork(&id).unwrap().expect("the session forks");
    let show = |handle: agent_host::agent::SessionHandle| {
        let test = &test;
        async move {
            let mut locked = handle.lock().await;
            test.host.command(&mut locked, "/goal", &*test.events).await
        }
    };
    assert_eq!(show(fork.clone()).await.unwrap(), "goal: Split the module\nactive · 0 of 20,000 tokens");
    {
        let mut locked = fork.lock().await;
        test.host.command(&mut locked, "/goal clear", &*test.events).await.unwrap();
    }
    assert!(show(fork).await.unwrap().starts_with("no goal"));
    assert_eq!(show(session).await.unwrap(), "goal: Split the module\nactive · 0 of 20,000 tokens");
}
