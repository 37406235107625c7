//! One writer per session, with two real processes of the binary on one database: a second
//! process that wants a session another has open is refused (exit status 1, the holder named),
//! and the first one's turn is intact; after it finishes the second runs. The holder renews
//! its lease while it works; a holder killed with `kill -9` does not block the session: on
//! the same machine its lease is taken over at once, from a machine this one cannot see it
//! is honoured until it runs out.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use agent_host::model::{Message, Role};
use agent_host::state::{SessionStore, SqliteStore};
use serde_json::Value;
use tokio::sync::Notify;

use crate::support::serve::serve;
use crate::support::{FakeModel, Reply, json_prompt_command, plugin_block, shared_cache_dir};

fn config(model_url: &str, lease_secs: u64) -> String {
    format!(
        "[agent]\nmax_iterations = 6\n\n[model]\nbase_url = \"{model_url}\"\nmodel = \"fake\"\napi_key_env = \"AGENT_HOST_TEST_KEY\"\nmax_retries = 0\ntimeout_secs = 60\n\n[storage]\npath = \"lease.db\"\nlease_secs = {lease_secs}\n\n[runtime]\ncache_dir = \"{}\"\n\n{}",
        shared_cache_dir().display(),
        plugin_block("misbehave", "")
    )
}

/// A deployment in a temporary folder whose leases last `lease_secs`.
fn deployment(model: &FakeModel, lease_secs: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config(&model.url(), lease_secs)).unwrap();
    dir
}

async fn run(dir: &Path, session: Option<&str>, prompt: &str) -> Output {
    json_prompt_command(dir, session, prompt).output().await.expect("the binary starts")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A new session with one finished turn; its id.
async fn new_session(dir: &Path, model: &FakeModel) -> String {
    model.push(Reply::text("created"));
    let output = run(dir, None, "create").await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first: Value = serde_json::from_str(stdout.lines().next().expect("a first line")).unwrap();
    first["session_id"].as_str().expect("a session id").to_owned()
}

/// Waits until the fake model has received `count` requests.
async fn requests_reach(model: &FakeModel, count: usize) {
    for _ in 0..600 {
        if model.requests().len() >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the model got {} requests, not {count}", model.requests().len());
}

fn history(dir: &Path, id: &str) -> Vec<Message> {
    SqliteStore::open(&dir.join("lease.db")).unwrap().load(id).unwrap().expect("the session exists").history
}

/// The user messages and the assistant texts of a history, in order.
fn said(history: &[Message]) -> Vec<String> {
    history
        .iter()
        .filter(|m| m.role == Role::User || (m.role == Role::Assistant && !m.content.is_empty()))
        .map(|m| m.content.clone())
        .collect()
}

/// Asserts that `output` is the refusal of a session a `--prompt` run holds, `pid` (on `host`
/// when given: a machine this one cannot look into, whose claim is honoured until it runs out).
fn assert_refused(output: &Output, id: &str, pid: u32, host: Option<&str>) {
    let stderr = stderr(output);
    assert_eq!(output.status.code(), Some(1), "refused with status 1: {stderr}");
    let holder = format!("is running a turn in process {pid} on {}", host.unwrap_or(""));
    assert!(stderr.contains(&format!("session {id}")) && stderr.contains(&holder), "{stderr}");
    assert!(stderr.contains(&format!("--fork {id}")), "offers a copy: {stderr}");
    let until = stderr.contains("runs out at ") && stderr.contains(" UTC");
    assert_eq!(until, host.is_some(), "says until when only for a holder it cannot see: {stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_on_a_session_in_use_is_refused_and_the_first_turn_is_intact() {
    let model = FakeModel::start().await;
    let dir = deployment(&model, 30);
    let id = new_session(dir.path(), &model).await;

    // The first process: its model reply waits until the second one has tried.
    let gate = Arc::new(Notify::new());
    model.push(Reply::tool("remember", r#"{"key":"a","value":1}"#).held_until(&gate));
    model.push(Reply::text("first done"));
    let first = json_prompt_command(dir.path(), Some(&id), "first").spawn().unwrap();
    let first_pid = first.id().unwrap();
    requests_reach(&model, 2).await;

    let second = run(dir.path(), Some(&id), "second").await;
    assert_refused(&second, &id, first_pid, None);
    assert_eq!(model.requests().len(), 2, "the refused process never called the model");

    gate.notify_one();
    let first = first.wait_with_output().await.unwrap();
    assert!(first.status.success(), "stderr: {}", stderr(&first));

    model.push(Reply::text("second done"));
    let second = run(dir.path(), Some(&id), "second").await;
    assert!(second.status.success(), "after the first finished: {}", stderr(&second));
    let history = history(dir.path(), &id);
    assert_eq!(said(&history), ["create", "created", "first", "first done", "second", "second done"]);
    let remembered = history.iter().filter(|m| m.role == Role::Tool).count();
    assert_eq!(remembered, 1, "the first turn's tool result is there: {history:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_holder_renews_its_lease_while_it_works() {
    let model = FakeModel::start().await;
    let dir = deployment(&model, 2);
    let id = new_session(dir.path(), &model).await;
    let gate = Arc::new(Notify::new());
    model.push(Reply::text("slow").held_until(&gate));
    let first = json_prompt_command(dir.path(), Some(&id), "slow").spawn().unwrap();
    let first_pid = first.id().unwrap();
    requests_reach(&model, 2).await;
    // Longer than a lease: without renewals it would have run out by now.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_refused(&run(dir.path(), Some(&id), "second").await, &id, first_pid, None);
    gate.notify_one();
    assert!(first.wait_with_output().await.unwrap().status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_left_by_a_killed_process_does_not_keep_the_session_closed() {
    let model = FakeModel::start().await;
    let dir = deployment(&model, 2);
    let id = new_session(dir.path(), &model).await;
    let db = dir.path().join("lease.db");
    let lease_of = |pid: u32| {
        let connection = rusqlite::Connection::open(&db).unwrap();
        connection
            .query_row(
                "SELECT expires_at FROM session_leases WHERE session_id = ?1 AND pid = ?2",
                (&id, pid),
                |row| row.get::<_, i64>(0),
            )
            .ok()
    };

    // Killed on this machine: its process is gone, so the lease is taken over at once.
    model.push(Reply::text("never sent").held_until(&Arc::new(Notify::new())));
    let mut killed = json_prompt_command(dir.path(), Some(&id), "killed").spawn().unwrap();
    let killed_pid = killed.id().unwrap();
    requests_reach(&model, 2).await;
    killed.kill().await.unwrap();
    assert!(lease_of(killed_pid).is_some(), "the killed process left its lease behind");
    model.push(Reply::text("resumed"));
    let resumed = run(dir.path(), Some(&id), "resume").await;
    assert!(resumed.status.success(), "stderr: {}", stderr(&resumed));
    assert_eq!(said(&history(dir.path(), &id)), ["create", "created", "killed", "resume", "resumed"]);

    // Killed on a machine this one cannot look into (the same store on a shared disk): its
    // lease stands until it runs out.
    model.push(Reply::text("never sent").held_until(&Arc::new(Notify::new())));
    let mut killed = json_prompt_command(dir.path(), Some(&id), "killed elsewhere").spawn().unwrap();
    let killed_pid = killed.id().unwrap();
    requests_reach(&model, 4).await;
    killed.kill().await.unwrap();
    let expires_at = agent_host::state::lease::now_millis() + 8_000;
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE session_leases SET host = 'another-machine', expires_at = ?2 WHERE session_id = ?1",
            (&id, expires_at),
        )
        .unwrap();
    assert_refused(&run(dir.path(), Some(&id), "too soon").await, &id, killed_pid, Some("another-machine"));
    let left = expires_at - agent_host::state::lease::now_millis();
    tokio::time::sleep(Duration::from_millis(left.max(0) as u64 + 100)).await;
    model.push(Reply::text("resumed again"));
    let resumed = run(dir.path(), Some(&id), "after it ran out").await;
    assert!(resumed.status.success(), "stderr: {}", stderr(&resumed));
    assert_eq!(
        said(&history(dir.path(), &id)),
        [
            "create",
            "created",
            "killed",
            "resume",
            "resumed",
            "killed elsewhere",
            "after it ran out",
            "resumed again"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_an_idle_console_holds_is_refused_naming_the_console_and_served_to_readers() {
    let model = FakeModel::start().await;
    // A console and a server on one deployment, as an operator and a web page share it.
    let server = serve(&model, &plugin_block("misbehave", ""), "").await;
    let dir = server.dir.path();
    let id = new_session(dir, &model).await;
    let mut console = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(["--session", &id])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let console_pid = console.id().unwrap();
    let mut shown =
        tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(console.stdout.take().unwrap()));
    let opened = format!("session {id} (resumed");
    tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = shown.next_line().await.unwrap() {
            if line.contains(&opened) {
                return;
            }
        }
        panic!("the console ended before it opened the session");
    })
    .await
    .expect("the console opens the session");

    // The console sits idle at its prompt, renewing its claim: nobody should wait for it.
    let refused = run(dir, Some(&id), "second").await;
    let said = stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!("session {id} is open in another console (process {console_pid} on ")),
        "{said}"
    );
    assert!(said.contains(&format!("--fork {id}")), "offers a copy: {said}");
    assert!(!said.contains("until ") && !said.contains("Wait for it"), "nothing to wait for: {said}");

    // Reading it over HTTP takes no lease, so the console is no obstacle.
    let (status, body) = server.get("root", &format!("/v1/sessions/{id}")).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    let messages: Vec<&str> =
        body["messages"].as_array().unwrap().iter().filter_map(|m| m["content"].as_str()).collect();
    assert!(messages.contains(&"create") && messages.contains(&"created"), "{body}");
    assert_eq!(body["busy"], true, "open elsewhere: {body}");

    drop(console.stdin.take());
    let left =
        tokio::time::timeout(Duration::from_secs(30), console.wait()).await.expect("the console leaves");
    assert!(left.unwrap().success());
}
