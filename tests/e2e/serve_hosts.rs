//! Many `serve` hosts on one PostgreSQL: real server processes sharing a real database. Any
//! host answers for any session: a turn posted to one runs there while another host's
//! stream shows it, `Last-Event-ID` means the same on every host, an approval answered on
//! one reaches the turn waiting on another, and so does a cancel; two hosts racing for one session run one turn
//! and tell the other caller 409; a host killed mid-turn is taken over at once, and one that
//! was only paused is taken over once its lease runs out and then writes nothing.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt as _;
use tokio::sync::Notify;

use crate::support::serve::{Server, serve_on_postgres};
use crate::support::{ASK_ABOUT_TOUCH, FakeModel, Reply, plugin_block};

fn of_type<'a>(events: &'a [(String, Value)], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|(_, event)| event["type"] == kind).map(|(_, event)| event).collect()
}

fn is_turn_end(event: &Value) -> bool {
    event["type"] == "turn_ended"
}

/// The number an event id of the shared log ends in.
fn number(id: &str) -> u64 {
    id.strip_prefix("log-").and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("not a log id: {id}"))
}

async fn post_message(server: &Server, session: &str, text: &str) -> (StatusCode, Value) {
    server.post("alice", &format!("/v1/sessions/{session}/messages"), json!({ "text": text })).await
}

/// The texts of the session's messages, as `GET` on `server` has them.
async fn message_texts(server: &Server, session: &str) -> Vec<String> {
    let (status, detail) = server.get("alice", &format!("/v1/sessions/{session}")).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Waits until the model has been asked `calls` times.
async fn model_asked(model: &FakeModel, calls: usize) {
    let asked = async {
        while model.requests().len() < calls {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), asked).await.expect("the model is asked");
}

#[tokio::test]
async fn a_turn_posted_to_one_host_streams_on_another_and_an_event_id_means_the_same_on_both() {
    let model = FakeModel::start().await;
    model.push(Reply::text("answered on b"));
    let a = serve_on_postgres(&model, "", "", 30).await;
    let b = a.another_on_the_same_store().await;
    let session = a.new_session("alice").await;

    // A follows the session while B runs its turn: A made it and had it open, B takes it.
    let (seen_on_a, posted) = tokio::join!(a.events_after("alice", &session, None, is_turn_end), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        post_message(&b, &session, "hello").await
    });
    assert_eq!(posted.0, StatusCode::ACCEPTED, "{}", posted.1);
    let numbers: Vec<u64> = seen_on_a.iter().map(|(id, _)| number(id)).collect();
    assert!(
        numbers.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "numbered in order, none missing: {numbers:?}"
    );
    let replies = of_type(&seen_on_a, "assistant_message");
    assert_eq!(replies.len(), 1, "{seen_on_a:?}");
    assert_eq!(replies[0]["text"], "answered on b");

    // B, asked for what followed an event A showed, sends exactly what A showed after it.
    let (resume_id, _) = &seen_on_a[1];
    let seen_on_b = b.events_after("alice", &session, Some(resume_id), is_turn_end).await;
    assert_eq!(seen_on_b, seen_on_a[2..].to_vec());

    // Both hosts read the committed turn, and the id of its last event.
    for server in [&a, &b] {
        assert_eq!(message_texts(server, &session).await, ["hello", "answered on b"]);
        let (_, detail) = server.get("alice", &format!("/v1/sessions/{session}")).await;
        assert_eq!(detail["last_event_id"].as_str(), seen_on_a.last().map(|(id, _)| id.as_str()));
    }
    // Another principal's session is not found on any host, its stream included.
    let (status, _) = b.get("bob", &format!("/v1/sessions/{session}/events")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// A stream on A held across three turns, run on A, then B, then A again: A's own events
/// come to it from its relay, B's from the log, and it shows every one once, in order, the
/// same (ids included) as a stream on B that reads them all from the log afterwards.
#[tokio::test]
async fn a_stream_held_across_turns_on_either_host_shows_every_event_once_in_order() {
    let model = FakeModel::start().await;
    for turn in 1..=3 {
        model.push(Reply::text(&format!("turn {turn}")));
    }
    let a = serve_on_postgres(&model, "", "", 30).await;
    let b = a.another_on_the_same_store().await;
    let session = a.new_session("alice").await;
    let third_turn_end = || {
        let ended = std::cell::Cell::new(0);
        move |event: &Value| {
            ended.set(ended.get() + usize::from(is_turn_end(event)));
            ended.get() == 3
        }
    };
    let turns = async {
        for (turn, host) in [(1, &a), (2, &b), (3, &a)] {
            tokio::time::sleep(Duration::from_millis(400)).await;
            let (status, body) = post_message(host, &session, &format!("ask {turn}")).await;
            assert_eq!(status, StatusCode::ACCEPTED, "turn {turn}: {body}");
            let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
            while message_texts(host, &session).await.len() < 2 * turn {
                assert!(tokio::time::Instant::now() < deadline, "turn {turn} did not end");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let (seen_on_a, ()) = tokio::join!(a.events_after("alice", &session, None, third_turn_end()), turns);
    let numbers: Vec<u64> = seen_on_a.iter().map(|(id, _)| number(id)).collect();
    assert_eq!(numbers, (1..=numbers.len() as u64).collect::<Vec<_>>(), "each once, in order");
    let replies: Vec<&Value> =
        of_type(&seen_on_a, "assistant_message").into_iter().map(|reply| &reply["text"]).collect();
    assert_eq!(replies, ["turn 1", "turn 2", "turn 3"]);
    let read_on_b = b.events_after("alice", &session, None, third_turn_end()).await;
    assert_eq!(read_on_b, seen_on_a);
}

#[tokio::test]
async fn two_hosts_racing_for_one_session_run_one_turn_and_tell_the_other_caller_409() {
    let model = FakeModel::start().await;
    let gate = Arc::new(Notify::new());
    model.push(Reply::text("the one turn").held_until(&gate));
    let a = serve_on_postgres(&model, "", "", 30).await;
    let b = a.another_on_the_same_store().await;
    let session = a.new_session("alice").await;
    tokio::time::sleep(Duration::from_millis(400)).await;

    let (on_a, on_b) =
        tokio::join!(post_message(&a, &session, "from a"), post_message(&b, &session, "from b"));
    let mut statuses = [on_a.0, on_b.0];
    statuses.sort();
    assert_eq!(statuses, [StatusCode::ACCEPTED, StatusCode::CONFLICT], "{on_a:?} {on_b:?}");
    let (refused, winner, loser) =
        if on_a.0 == StatusCode::CONFLICT { (&on_a.1, "from b", &a) } else { (&on_b.1, "from a", &b) };
    assert!(refused["error"].as_str().unwrap().contains("a turn is running"), "{refused}");

    gate.notify_one();
    // The loser's host follows the winner's turn to its end.
    let events = loser.events_after("alice", &session, None, is_turn_end).await;
    assert_eq!(of_type(&events, "turn_ended").len(), 1);
    assert_eq!(message_texts(loser, &session).await, [winner, "the one turn"], "one step, whole, once");
    assert_eq!(model.requests().len(), 1, "one model call");
}

#[tokio::test]
async fn a_turn_running_on_one_host_is_read_and_cancelled_from_another() {
    let model = FakeModel::start().await;
    let gate = Arc::new(Notify::new());
    model.push(Reply::text("never sent").held_until(&gate));
    let a = serve_on_postgres(&model, "", "", 30).await;
    let b = a.another_on_the_same_store().await;
    let session = a.new_session("alice").await;
    let (status, _) = post_message(&a, &session, "wait").await;
    assert_eq!(status, StatusCode::ACCEPTED);
    model_asked(&model, 1).await;
    // While the turn runs on A, B reads the session from the database: busy, as committed.
    let (status, detail) = b.get("alice", &format!("/v1/sessions/{session}")).await;
    assert_eq!((status, detail["busy"].as_bool()), (StatusCode::OK, Some(true)), "{detail}");
    let (status, export) = b.get("alice", &format!("/v1/sessions/{session}/export")).await;
    assert_eq!(status, StatusCode::OK, "{export}");
    assert_eq!(listed_busy(&b, &session).await, Some(true), "B's list: busy on A");
    let (status, _) = b.get("bob", &format!("/v1/sessions/{session}/export")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let path = format!("/v1/sessions/{session}/cancel");
    let (status, _) = b.post("bob", &path, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not bob's to cancel");
    let (status, body) = b.post("alice", &path, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let events = b.events_after("alice", &session, None, is_turn_end).await;
    assert_eq!(of_type(&events, "turn_ended")[0]["reason"], "cancelled", "{events:?}");
    // A lets the idle session go, and B's list says so.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while listed_busy(&b, &session).await != Some(false) {
        assert!(tokio::time::Instant::now() < deadline, "B's list still has the session busy");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether `server`'s list of alice's sessions has `session` busy.
async fn listed_busy(server: &Server, session: &str) -> Option<bool> {
    let (status, list) = server.get("alice", "/v1/sessions").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let sessions = list["sessions"].as_array().cloned().unwrap_or_default();
    sessions.iter().find(|entry| entry["id"] == session).and_then(|entry| entry["busy"].as_bool())
}

#[tokio::test]
async fn an_approval_answered_on_one_host_reaches_the_turn_waiting_on_another() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("touch", "{}"));
    model.push(Reply::text("touched it"));
    let plugins =
        format!("{}{}", plugin_block("misbehave", ""), plugin_block("permissions", ASK_ABOUT_TOUCH));
    let a = serve_on_postgres(&model, &plugins, "approval_timeout_secs = 60", 30).await;
    let b = a.another_on_the_same_store().await;
    let session = a.new_session("alice").await;
    let (status, body) = post_message(&a, &session, "touch").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");

    let asked = b.events_after("alice", &session, None, |event| event["type"] == "approval_requested").await;
    let ask = of_type(&asked, "approval_requested")[0];
    let path = format!("/v1/sessions/{session}/approvals/{}", ask["id"].as_str().unwrap());
    let (status, body) = b.post("bob", &path, json!({"answer": "once"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not bob's to answer: {body}");
    let (status, body) = b.post("alice", &path, json!({"answer": "once"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let (last, _) = asked.last().unwrap();
    let rest = b.events_after("alice", &session, Some(last), is_turn_end).await;
    let answered = of_type(&rest, "approval_answered");
    assert_eq!(answered.len(), 1, "{rest:?}");
    assert_eq!(answered[0]["answer"], "allow_once");
    let result = of_type(&rest, "tool_result")[0];
    assert_eq!((result["ok"].as_bool(), result["output"].as_str()), (Some(true), Some("touched")));
    let (status, _) = b.post("alice", &path, json!({"answer": "once"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "answered already");
}

#[tokio::test]
async fn a_host_killed_mid_turn_is_taken_over_at_once_and_every_committed_step_stays() {
    let model = FakeModel::start().await;
    model.push(Reply::text("first answer"));
    let a = serve_on_postgres(&model, "", "", 30).await;
    let b = a.another_on_the_same_store().await;
    let session = a.new_session("alice").await;
    let (status, _) = post_message(&a, &session, "first").await;
    assert_eq!(status, StatusCode::ACCEPTED);
    a.events_after("alice", &session, None, is_turn_end).await;

    let gate = Arc::new(Notify::new());
    model.push(Reply::text("never sent").held_until(&gate));
    let (status, _) = post_message(&a, &session, "second").await;
    assert_eq!(status, StatusCode::ACCEPTED);
    model_asked(&model, 2).await;
    a.signal("KILL");

    // On the same machine the killed holder is seen gone: no wait for its lease to run out.
    let (status, detail) = b.get("alice", &format!("/v1/sessions/{session}")).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    let after = detail["last_event_id"].as_str().map(str::to_owned);
    model.push(Reply::text("third answer"));
    let (status, body) = post_message(&b, &session, "third").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let _ = b.events_after("alice", &session, after.as_deref(), is_turn_end).await;
    let texts = message_texts(&b, &session).await;
    assert_eq!(&texts[..2], ["first", "first answer"], "the killed host's committed turn stays: {texts:?}");
    assert_eq!(texts.last().map(String::as_str), Some("third answer"), "{texts:?}");
    assert!(!texts.iter().any(|text| text == "never sent"), "{texts:?}");

    let (status, metrics) = b.get("root", "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    let metrics = metrics.as_str().unwrap().to_owned();
    assert!(metrics.lines().any(|line| line == "agent_host_lease_takeovers_total 1"), "{metrics}");
}

#[tokio::test]
async fn a_paused_host_is_taken_over_once_its_lease_runs_out_and_writes_nothing_when_it_wakes() {
    let model = FakeModel::start().await;
    let gate = Arc::new(Notify::new());
    model.push(Reply::text("a's late answer").held_until(&gate));
    // Renewed every third of its length, the lease outlives the 1.5 s a request waits for it.
    let a = serve_on_postgres(&model, "", "", 4).await;
    let b = a.another_on_the_same_store().await;
    let session = a.new_session("alice").await;
    let (status, _) = post_message(&a, &session, "first").await;
    assert_eq!(status, StatusCode::ACCEPTED);
    model_asked(&model, 1).await;
    a.signal("STOP");

    // A is alive but silent: its lease holds until it runs out, then B takes the session.
    model.push(Reply::text("b's answer"));
    let (first_try, _) = post_message(&b, &session, "second").await;
    assert_eq!(first_try, StatusCode::CONFLICT, "the paused host's lease is still live");
    let taken = async {
        loop {
            let (status, body) = post_message(&b, &session, "second").await;
            match status {
                StatusCode::ACCEPTED => return,
                StatusCode::CONFLICT => tokio::time::sleep(Duration::from_millis(200)).await,
                other => panic!("{other}: {body}"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), taken).await.expect("taken over once the lease ran out");
    let ended_on_b = b.events_after("alice", &session, None, is_turn_end).await;
    assert_eq!(of_type(&ended_on_b, "assistant_message")[0]["text"], "b's answer");

    // A wakes, its model call answers, and its step is refused by the fence: it says so in
    // its log and writes nothing, its events included.
    let mut a = a;
    let mut log = tokio::io::BufReader::new(a.child.stderr.take().unwrap()).lines();
    a.signal("CONT");
    gate.notify_one();
    let refused = async {
        while let Some(line) = log.next_line().await.unwrap() {
            if line.contains("taken over") {
                return line;
            }
        }
        panic!("the paused host ended without saying its step was refused");
    };
    let refused = tokio::time::timeout(Duration::from_secs(20), refused).await.expect("A says it was fenced");
    assert!(refused.contains(&session), "{refused}");
    // A stops as an operator stops it: its relay writes out whatever it still held first.
    a.signal("TERM");
    let stopped =
        tokio::time::timeout(Duration::from_secs(20), a.child.wait()).await.expect("A stops on SIGTERM");
    assert!(stopped.unwrap().success());
    let (_, detail) = b.get("alice", &format!("/v1/sessions/{session}")).await;
    assert_eq!(
        detail["last_event_id"],
        ended_on_b.last().unwrap().0.as_str(),
        "no event of A's after B's turn"
    );
    let texts = message_texts(&b, &session).await;
    assert!(texts.ends_with(&["second".to_owned(), "b's answer".to_owned()]), "{texts:?}");
    assert!(!texts.iter().any(|text| text.contains("late")), "the stale step was not written: {texts:?}");

    let (_, metrics) = b.get("root", "/metrics").await;
    assert!(
        metrics.as_str().unwrap().lines().any(|line| line == "agent_host_lease_takeovers_total 1"),
        "{metrics}"
    );
}
