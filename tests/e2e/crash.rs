//! `kill -9` at varied points of a turn, over many runs of the real binary sharing one
//! session: after every kill the database loads, state and history agree (no half-written
//! step), and the next run repairs any interrupted tool call and resumes the session.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use agent_host::model::Role;
use agent_host::state::{SessionStore, SqliteStore, StoredSession};
use serde_json::Value;

use crate::support::{FakeModel, Reply, plugin_block, shared_cache_dir};

/// Runs that are killed; each kill lands a little later in the turn than the one before.
const KILLED_RUNS: u64 = 12;
/// Remember calls scripted per run, so a turn spans several model calls and commits.
const CALLS_PER_RUN: usize = 6;

/// What the tool result says when the host repaired a call a kill left unanswered.
const INTERRUPTED: &str = "the call was interrupted";

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

fn command(dir: &Path, session: Option<&str>) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(["--json", "--prompt", "remember things"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(id) = session {
        command.args(["--session", id]);
    }
    command
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_varied_points_of_a_turn_loses_nothing_and_the_session_resumes() {
    let model = FakeModel::start().await;
    model.fallback(Reply::text("Noted."));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config(&model.url())).unwrap();
    let db = dir.path().join("crash.db");

    script_run(&model, 0);
    let id = run_to_completion(dir.path(), None).await;
    let mut stored = load(&db, &id);
    assert_every_call_answered(&stored, "first run");
    assert_state_matches_history(&stored, "first run");
    let mut count = stored.history.len();

    let mut interrupted_mid_turn = 0;
    for run in 1..=KILLED_RUNS {
        script_run(&model, run);
        let mut child = command(dir.path(), Some(&id)).spawn().expect("the binary starts");
        let delay = Duration::from_millis(run * 300 / KILLED_RUNS);
        let finished = tokio::time::timeout(delay, child.wait()).await.is_ok();
        if !finished {
            child.kill().await.expect("SIGKILL is delivered");
        }
        let context = format!("after run {run} (killed after {delay:?}: {})", !finished);
        stored = load(&db, &id);
        assert!(stored.history.len() >= count, "{context}: history shrank");
        // Killed after some steps were committed but before the turn's final reply.
        let grew = stored.history.len() > count;
        if !finished && grew && stored.history.last().is_some_and(|m| m.content != "Noted.") {
            interrupted_mid_turn += 1;
        }
        count = stored.history.len();
        assert_state_matches_history(&stored, &context);
    }

    script_run(&model, KILLED_RUNS + 1);
    run_to_completion(dir.path(), Some(&id)).await;
    stored = load(&db, &id);
    assert!(stored.history.len() > count, "the last run added to the history");
    assert_every_call_answered(&stored, "after the last run");
    assert_state_matches_history(&stored, "after the last run");
    assert_eq!(stored.history.last().unwrap().content, "Noted.");
    let repaired = stored.history.iter().filter(|m| m.content.starts_with(INTERRUPTED)).count();
    eprintln!(
        "crash: {KILLED_RUNS} kills, {interrupted_mid_turn} landed mid-turn, {repaired} calls repaired, {} messages, losses: 0",
        stored.history.len()
    );
}
