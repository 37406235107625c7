//! `kill -9` at random points of a turn, over many runs of the real binary: one session
//! killed run after run, then several sessions run side by side and killed at the same
//! instant. After every kill the database loads, state and history agree (no half-written
//! step), and the next run repairs any interrupted tool call and resumes the session.
//!
//! Half the kills come after a random delay, which may fall anywhere, between turns too; the
//! other half right after the host reports a random one of its tool results, with more calls
//! still to come. The store after each kill tells whether it landed mid-turn (the turn's
//! prompt committed, its final reply not), and each test fails if none did: a test whose
//! kills all fell between turns would prove nothing about a turn cut short.
//!
//! The kill points come from a seed taken from the clock and printed; set
//! `AGENT_HOST_CRASH_SEED` to that number to replay the same points (the process timing
//! around them is the machine's, so a replay is close, not exact).

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use agent_host::model::Role;
use agent_host::state::{SessionStore, SqliteStore, StoredSession};
use futures_util::future::join_all;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

use crate::support::{FakeModel, Reply, json_prompt_command, plugin_block, shared_cache_dir};

/// Runs of one session, each killed unless it finishes before its delay.
const KILLED_RUNS: u64 = 12;
/// Kill delays for one run alone: from before the host is up to the end of a turn.
const SINGLE_RUN_WINDOW_MS: u64 = 300;
/// Sessions run side by side and killed at once, and how many times that is done.
const SIDE_BY_SIDE: usize = 4;
const GROUP_KILLS: u64 = 5;
/// Kill delays for the group: the processes share two cores, so a turn takes longer.
const GROUP_WINDOW_MS: u64 = 500;
/// The variable that replays a run's kill delays.
const SEED_VARIABLE: &str = "AGENT_HOST_CRASH_SEED";
/// Remember calls scripted per run, so a turn spans several model calls and commits.
const CALLS_PER_RUN: usize = 6;

/// What the tool result says when the host repaired a call a kill left unanswered.
const INTERRUPTED: &str = "the call was interrupted";
/// The reply that ends every turn (the model's fallback once a run's calls are used up).
const FINAL_REPLY: &str = "Noted.";
/// Longest wait for the tool result a kill waits for: a host that never reports it is stuck.
const EVENT_WAIT: Duration = Duration::from_secs(60);

fn config(model_url: &str) -> String {
    format!(
        "[agent]\nmax_iterations = 200\n\n[model]\nbase_url = \"{model_url}\"\nmodel = \"fake\"\napi_key_env = \"AGENT_HOST_TEST_KEY\"\nmax_retries = 0\ntimeout_secs = 5\n\n[storage]\npath = \"crash.db\"\n\n[runtime]\ncache_dir = \"{}\"\n\n{}",
        shared_cache_dir().display(),
        plugin_block("misbehave", "")
    )
}

/// Queues one run's worth of replies: remember calls with keys and call ids unique to the run.
/// Replies a killed run did not consume are used by the next one; the fallback ends each turn.
fn script_run(model: &FakeModel, run: u64) {
    for call in 0..CALLS_PER_RUN {
        let arguments = format!(r#"{{"key":"r{run}c{call}","value":{call}}}"#);
        model.push(Reply::tool("remember", &arguments).with_id(&format!("r{run}c{call}")));
    }
}

/// SplitMix64: a few lines of well-mixed numbers from one seed, so the delays replay.
struct Delays(u64);

impl Delays {
    /// The seed from [`SEED_VARIABLE`], or from the clock; printed either way.
    fn from_env_or_clock(test: &str) -> (Self, u64) {
        let seed =
            std::env::var(SEED_VARIABLE).ok().and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| {
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
            });
        eprintln!("{test}: seed {seed} (replay with {SEED_VARIABLE}={seed})");
        (Self(seed), seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A delay from 0 to `max_ms` milliseconds.
    fn next(&mut self, max_ms: u64) -> Duration {
        Duration::from_millis(self.next_u64() % (max_ms + 1))
    }

    /// Where to kill a run: after a delay of up to `window_ms` when `by_delay`, else after a
    /// tool result that leaves at least two of the run's calls (and the final reply) to come.
    fn kill_point(&mut self, by_delay: bool, window_ms: u64) -> KillPoint {
        if by_delay {
            KillPoint::After(self.next(window_ms))
        } else {
            KillPoint::AtToolResult(1 + (self.next_u64() % (CALLS_PER_RUN as u64 - 2)) as usize)
        }
    }
}

/// When a run is killed.
#[derive(Debug, Clone, Copy)]
enum KillPoint {
    /// This long after it starts: anywhere, from before the host is up to after the turn.
    After(Duration),
    /// As soon as the host reports the `n`th tool result of the turn.
    AtToolResult(usize),
}

impl KillPoint {
    /// Waits for the point in `child`'s run (started `started`); whether it is still running.
    async fn reached(self, child: &mut Child, started: tokio::time::Instant) -> bool {
        match self {
            KillPoint::After(delay) => tokio::time::timeout_at(started + delay, child.wait()).await.is_err(),
            KillPoint::AtToolResult(n) => {
                let stdout = child.stdout.take().expect("the child's stdout is piped");
                let reached = tokio::time::timeout(EVENT_WAIT, nth_tool_result(stdout, n))
                    .await
                    .unwrap_or_else(|_| panic!("no tool result {n} within {EVENT_WAIT:?}"));
                if !reached {
                    child.wait().await.expect("the child is reaped");
                }
                reached
            }
        }
    }
}

/// Reads the `--json` events until the `n`th tool result after the turn's first model
/// request (results a run repairs for the run before it come earlier): true once it is
/// read, false if the run ended first.
async fn nth_tool_result(stdout: tokio::process::ChildStdout, n: usize) -> bool {
    let mut lines = BufReader::new(stdout).lines();
    let (mut requested, mut results) = (false, 0);
    while let Some(line) = lines.next_line().await.expect("the child's stdout reads") {
        let event: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        match event["type"].as_str() {
            Some("model_request") => requested = true,
            Some("tool_result") if requested => results += 1,
            _ => {}
        }
        if results == n {
            return true;
        }
    }
    false
}

/// The binary on the deployment in `dir`, told to remember things.
fn command(dir: &Path, session: Option<&str>) -> tokio::process::Command {
    json_prompt_command(dir, session, "remember things")
}

/// Runs to the end and returns the session id from the first `--json` line.
async fn run_to_completion(dir: &Path, session: Option<&str>) -> String {
    let output = command(dir, session).output().await.expect("the binary starts");
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first: Value = serde_json::from_str(stdout.lines().next().expect("a first line")).unwrap();
    assert_eq!(first["type"], "session_started", "{stdout}");
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "turn_ended", "{stdout}");
    first["session_id"].as_str().expect("a session id").to_owned()
}

fn load(db: &Path, id: &str) -> StoredSession {
    SqliteStore::open(db)
        .expect("the database opens after a kill")
        .load(id)
        .expect("every row of the session reads back")
        .expect("the session still exists")
}

/// State and history were committed in the same step: the plugin's memory holds exactly one
/// key per `remember` result that ran (keys are unique), never more and never fewer.
fn assert_state_matches_history(stored: &StoredSession, context: &str) {
    let remembered = stored
        .history
        .iter()
        .filter(|m| m.role == Role::Tool && m.content.ends_with("values remembered"))
        .count();
    let memory = stored
        .state
        .iter()
        .find(|(namespace, key, _)| namespace == "misbehave" && key == "memory")
        .map(|(_, _, json)| serde_json::from_str::<serde_json::Map<String, Value>>(json).unwrap().len())
        .unwrap_or(0);
    assert_eq!(memory, remembered, "{context}: memory and history disagree");
}

/// Every tool call an assistant made has a result somewhere after it.
fn assert_every_call_answered(stored: &StoredSession, context: &str) {
    for (position, message) in stored.history.iter().enumerate() {
        let answered: HashSet<&str> =
            stored.history[position + 1..].iter().filter_map(|m| m.tool_call_id.as_deref()).collect();
        for call in &message.tool_calls {
            assert!(answered.contains(call.id.as_str()), "{context}: call {} has no result", call.id);
        }
    }
}

/// Whether a kill landed mid-turn: the store holds the run's prompt (past the `before`
/// messages the session had) and no final reply after it.
fn killed_mid_turn(stored: &StoredSession, before: usize) -> bool {
    let added = &stored.history[before.min(stored.history.len())..];
    let Some(prompt) = added.iter().rposition(|m| m.role == Role::User) else {
        return false;
    };
    !added[prompt..].iter().any(|m| m.role == Role::Assistant && m.content == FINAL_REPLY)
}

/// A fresh deployment in a temporary folder, pointed at `model`.
fn deployment(model: &FakeModel) -> tempfile::TempDir {
    model.fallback(Reply::text(FINAL_REPLY));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config(&model.url())).unwrap();
    dir
}

/// The last run of a session, not killed: it ends the turn and answers every call a kill
/// left open. Returns the calls repaired over the session's life and its message count.
async fn finish_and_check(dir: &Path, id: &str, before: usize, context: &str) -> (usize, usize) {
    run_to_completion(dir, Some(id)).await;
    let stored = load(&dir.join("crash.db"), id);
    assert!(stored.history.len() > before, "{context}: the last run added to the history");
    assert_every_call_answered(&stored, context);
    assert_state_matches_history(&stored, context);
    assert_eq!(stored.history.last().unwrap().content, FINAL_REPLY, "{context}");
    let repaired = stored.history.iter().filter(|m| m.content.starts_with(INTERRUPTED)).count();
    (repaired, stored.history.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_of_a_turn_loses_nothing_and_the_session_resumes() {
    let (mut delays, seed) = Delays::from_env_or_clock("crash (one session)");
    let model = FakeModel::start().await;
    let dir = deployment(&model);
    let db = dir.path().join("crash.db");

    script_run(&model, 0);
    let id = run_to_completion(dir.path(), None).await;
    let mut stored = load(&db, &id);
    assert_every_call_answered(&stored, "first run");
    assert_state_matches_history(&stored, "first run");
    let mut count = stored.history.len();

    let (mut killed, mut mid_turn) = (0, 0);
    for run in 1..=KILLED_RUNS {
        script_run(&model, run);
        let point = delays.kill_point(run % 2 == 1, SINGLE_RUN_WINDOW_MS);
        let started = tokio::time::Instant::now();
        let mut child = command(dir.path(), Some(&id)).spawn().expect("the binary starts");
        let finished = !point.reached(&mut child, started).await;
        if !finished {
            child.kill().await.expect("SIGKILL is delivered");
            killed += 1;
        }
        let context = format!("seed {seed}, run {run} (killed at {point:?}: {})", !finished);
        stored = load(&db, &id);
        assert!(stored.history.len() >= count, "{context}: history shrank");
        if !finished && killed_mid_turn(&stored, count) {
            mid_turn += 1;
        }
        count = stored.history.len();
        assert_state_matches_history(&stored, &context);
    }

    assert!(mid_turn > 0, "seed {seed}: none of the {killed} kills landed mid-turn");
    script_run(&model, KILLED_RUNS + 1);
    let (repaired, messages) =
        finish_and_check(dir.path(), &id, count, &format!("seed {seed}, last run")).await;
    eprintln!(
        "crash (one session): {KILLED_RUNS} runs, {killed} killed, {mid_turn} mid-turn, {repaired} calls repaired, {messages} messages, losses: 0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_killed_at_the_same_instant_all_resume_intact() {
    let (mut delays, seed) = Delays::from_env_or_clock("crash (side by side)");
    let model = FakeModel::start().await;
    let dir = deployment(&model);
    let db = dir.path().join("crash.db");

    for session in 0..SIDE_BY_SIDE {
        script_run(&model, 100 + session as u64);
    }
    let ids = join_all((0..SIDE_BY_SIDE).map(|_| run_to_completion(dir.path(), None))).await;
    let mut counts: Vec<usize> = ids.iter().map(|id| load(&db, id).history.len()).collect();

    let (mut killed, mut mid_turn) = (0, 0);
    for round in 1..=GROUP_KILLS {
        let mut children = Vec::new();
        for (session, id) in ids.iter().enumerate() {
            script_run(&model, round * 1000 + session as u64);
            children.push(command(dir.path(), Some(id)).spawn().expect("the binary starts"));
        }
        let started = tokio::time::Instant::now();
        // A tool result is one session's (a different one each round); the others are
        // wherever they are then.
        let point = delays.kill_point(round % 2 == 0, GROUP_WINDOW_MS);
        match point {
            KillPoint::After(delay) => tokio::time::sleep_until(started + delay).await,
            KillPoint::AtToolResult(_) => {
                point.reached(&mut children[round as usize % SIDE_BY_SIDE], started).await;
            }
        }
        // Every process still running is killed now, back to back.
        let mut running = Vec::new();
        for child in &mut children {
            running.push(child.try_wait().expect("the child's status").is_none());
            let _ = child.start_kill();
        }
        for child in &mut children {
            child.wait().await.expect("the child is reaped");
        }
        for (session, id) in ids.iter().enumerate() {
            let context = format!("seed {seed}, round {round} (killed at {point:?}), session {session}");
            let stored = load(&db, id);
            assert!(stored.history.len() >= counts[session], "{context}: history shrank");
            if running[session] {
                killed += 1;
                mid_turn += usize::from(killed_mid_turn(&stored, counts[session]));
            }
            counts[session] = stored.history.len();
            assert_state_matches_history(&stored, &context);
        }
    }

    assert!(mid_turn > 0, "seed {seed}: none of the {killed} processes killed was mid-turn");
    for session in 0..SIDE_BY_SIDE {
        script_run(&model, 9000 + session as u64);
    }
    let contexts: Vec<String> =
        (0..SIDE_BY_SIDE).map(|session| format!("seed {seed}, last run of session {session}")).collect();
    let finished = join_all(
        ids.iter()
            .zip(&counts)
            .zip(&contexts)
            .map(|((id, &before), context)| finish_and_check(dir.path(), id, before, context)),
    )
    .await;
    let (repaired, messages) = finished.iter().fold((0, 0), |(r, m), (fixed, count)| (r + fixed, m + count));
    eprintln!(
        "crash (side by side): {SIDE_BY_SIDE} sessions x {GROUP_KILLS} rounds, {killed} processes killed, {mid_turn} mid-turn, {repaired} calls repaired, {messages} messages, losses: 0"
    );
}

/// What a crash while a tool runs would leave: the session as the database holds it then.
/// A reply whose tools change nothing becomes durable with their results, as one step; a
/// reply asking for a change is durable before the change starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_is_durable_before_a_mutating_tool_runs_and_with_the_results_of_read_only_ones() {
    use crate::support::TestHost;

    for (calls, mutating) in [(vec!["spin"], false), (vec!["touch", "spin"], true)] {
        let model = FakeModel::start().await;
        let mut reply = Reply::tool(calls[0], "{}");
        for call in &calls[1..] {
            reply = reply.and_tool(call, "{}");
        }
        model.push(reply);
        model.push(Reply::text("done"));
        // `spin` never returns: the call ends at its deadline, which leaves time to look.
        let limits = "[plugin.limits]\ntimeout_ms = 1500\n";
        let test =
            std::sync::Arc::new(TestHost::with_plugins(&model, &plugin_block("misbehave", limits)).await);
        let session = test.session();
        let id = session.lock().await.id().to_owned();
        let turn = tokio::spawn({
            let (test, session) = (test.clone(), session.clone());
            async move { test.turn(&session, "go").await.map(|outcome| outcome.reply) }
        });
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert!(!turn.is_finished(), "{calls:?}: the tool is still running");
        let during = load(&test.db_path(), &id);
        let replies = during.history.iter().filter(|m| m.role == Role::Assistant).count();
        assert_eq!(replies, usize::from(mutating), "{calls:?}: replies durable while the tool runs");

        assert_eq!(turn.await.unwrap().unwrap(), "done");
        let after = load(&test.db_path(), &id);
        assert_eq!(after.history.iter().filter(|m| m.role == Role::Assistant).count(), 2, "{calls:?}");
        assert_every_call_answered(&after, &format!("{calls:?}"));
    }
}
