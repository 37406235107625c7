//! Sessions you can carry, through the real binary: `--fork ID`, `/export FILE` and
//! `--import FILE`, of a session whose history a compaction has replaced part of. What the
//! next model call of a copy sends is what the source's sends; the source is left alone; a
//! document goes out and back in byte for byte; a newer or broken one is refused by field.

use std::path::Path;
use std::process::Stdio;

use agent_host::agent::SessionHandle;
use agent_host::compacted_history::{Compaction, MessageId, Replacement};
use agent_host::conversation::{Message, Role};
use agent_host::state::{SessionStore, SqliteStore, document};
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::support::{FakeModel, Reply, TestHost, json_prompt_command, plugin_block};

const SUMMARY: &str = "Summary: the operator asked for a release plan; one todo was added.";

/// A session of two turns with the todo plugin (a tool call, state in the bag, usage
/// reported), then compacted: the first turn's call, its result and the reply after become a
/// summary. Its id.
async fn compacted_source(test: &TestHost, model: &FakeModel) -> String {
    compacted_session(test, model).await.1
}

/// [`compacted_source`], still open: its handle (with the encodings its model calls kept)
/// and its id.
async fn compacted_session(test: &TestHost, model: &FakeModel) -> (SessionHandle, String) {
    let session = test.session();
    model.push(Reply::tool("todos_add", r#"{"todos":[{"title":"write the notes"}]}"#).usage(900, 0, 20));
    model.push(Reply::text("Planned: one todo.").usage(950, 900, 12));
    test.turn(&session, "plan the release").await.unwrap();
    model.push(Reply::text("Write the notes next."));
    test.turn(&session, "what next?").await.unwrap();
    let mut open = session.lock().await;
    let sent = open.viewed();
    let reply = sent.iter().position(|viewed| viewed.message.content == "Planned: one todo.").unwrap();
    let first_user = sent.iter().find(|viewed| viewed.message.role == Role::User).unwrap().id;
    let compaction = Compaction {
        replaces: reply + 1,
        entries: vec![Replacement::Keep(first_user), Replacement::Summary(Message::user(SUMMARY))],
    };
    open.compact(&**test.host.sessions().store(), compaction).unwrap();
    let id = open.id().to_owned();
    drop(open);
    (session, id)
}

fn exported(db: &Path, id: &str) -> String {
    document::export(&SqliteStore::open(db).unwrap().load(id).unwrap().unwrap()).unwrap()
}

/// One `--json --prompt` turn with `start` (`--session ID`, `--fork ID`, `--import FILE`):
/// the id of the session it ran in.
async fn turn_with(dir: &Path, start: &[&str], prompt: &str) -> String {
    let mut command = json_prompt_command(dir, None, prompt);
    command.args(start);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{start:?}: {}\n{stdout}", String::from_utf8_lossy(&output.stderr));
    let first: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    first["session_id"].as_str().unwrap().to_owned()
}

/// The console with `start`, fed `input`: (exit status, stdout, stderr).
async fn console_with(dir: &Path, start: &[&str], input: &str) -> (Option<i32>, String, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(start)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code(), text(&output.stdout), text(&output.stderr))
}

fn contents(request: &Value) -> Vec<String> {
    request["messages"].as_array().unwrap().iter().map(|m| m["content"].to_string()).collect()
}

#[tokio::test]
async fn an_imported_or_forked_session_sends_what_its_source_would_and_the_source_is_left_alone() {
    let model = FakeModel::start().await;
    let test =
        TestHost::with_plugins(&model, &plugin_block("todo", "[plugin.config.loop]\nenabled = false\n"))
            .await;
    let source = compacted_source(&test, &model).await;
    let dir = test.dir.path();
    let db = test.db_path();
    let file = dir.join("source.json");
    let before = exported(&db, &source);
    std::fs::write(&file, &before).unwrap();
    assert!(before.contains(SUMMARY) && before.contains("\"input_tokens\": 950"), "{before}");

    // The same next turn, in a copy imported from the file, a fork, and the source itself.
    let calls_before = model.requests().len();
    for _ in 0..3 {
        model.push(Reply::text("On it."));
    }
    let imported = turn_with(dir, &["--import", file.to_str().unwrap()], "go on").await;
    let forked = turn_with(dir, &["--fork", &source], "go on").await;
    assert_eq!(exported(&db, &source), before, "neither the import nor the fork's turn touched the source");
    assert_eq!(turn_with(dir, &["--session", &source], "go on").await, source);
    assert!(imported != source && forked != source && imported != forked);

    let requests = model.requests();
    let [by_import, by_fork, by_source] = &requests[calls_before..] else { panic!("three model calls") };
    assert_eq!(by_import["messages"], by_source["messages"], "the import sends what the source does");
    assert_eq!(by_fork["messages"], by_source["messages"], "the fork sends what the source does");
    // The compacted view is what all of them resumed: the summary in, the first turn's call,
    // result and reply out, the todo list (from the copied state bag) still injected.
    let sent = contents(by_source).join("\n");
    assert!(sent.contains(SUMMARY), "{sent}");
    assert!(!sent.contains("Planned: one todo.") && !sent.contains("todos_add"), "{sent}");
    assert!(sent.contains("write the notes"), "the todo list rides along: {sent}");
    // Every original message stays in the store.
    let stored = SqliteStore::open(&db).unwrap().load(&source).unwrap().unwrap();
    assert!(stored.history.iter().any(|message| message.content == "Planned: one todo."));
    assert_eq!(stored.view.unwrap().view.entries[1], MessageId::Summary(1));
}

#[tokio::test]
async fn the_next_call_in_the_same_process_sends_the_new_view_not_the_encodings_kept_before_it() {
    let model = FakeModel::start().await;
    let test =
        TestHost::with_plugins(&model, &plugin_block("todo", "[plugin.config.loop]\nenabled = false\n"))
            .await;
    // Three model calls so far encoded the full history into this session's kept encodings.
    let (session, _) = compacted_session(&test, &model).await;
    let before = model.requests().last().unwrap().clone();
    assert!(contents(&before).join("\n").contains("Planned: one todo."));
    model.push(Reply::text("On it."));
    test.turn(&session, "go on").await.unwrap();
    let sent = contents(model.requests().last().unwrap()).join("\n");
    assert!(sent.contains(SUMMARY), "{sent}");
    assert!(!sent.contains("Planned: one todo.") && !sent.contains("todos_add"), "{sent}");
    assert!(sent.contains("Write the notes next.") && sent.contains("go on"), "{sent}");
}

#[tokio::test]
async fn export_import_export_in_the_console_is_byte_for_byte_the_same() {
    let model = FakeModel::start().await;
    let test =
        TestHost::with_plugins(&model, &plugin_block("todo", "[plugin.config.loop]\nenabled = false\n"))
            .await;
    let source = compacted_source(&test, &model).await;
    let dir = test.dir.path();
    let first = dir.join("first.json");
    let (status, stdout, stderr) =
        console_with(dir, &["--session", &source], &format!("/export {}\n", first.display())).await;
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains(&format!("session {source} written to {}", first.display())), "{stdout}");
    assert_eq!(std::fs::read_to_string(&first).unwrap(), exported(&test.db_path(), &source));

    let second = dir.join("second.json");
    let (status, stdout, stderr) =
        console_with(dir, &["--import", first.to_str().unwrap()], &format!("/export {}\n", second.display()))
            .await;
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains("written to"), "{stdout}");
    assert_eq!(std::fs::read(&second).unwrap(), std::fs::read(&first).unwrap());
}

#[tokio::test]
async fn a_newer_or_malformed_document_is_refused_naming_the_field_and_no_session_is_made() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, "").await;
    let dir = test.dir.path();
    let sessions_before = test.host.sessions().store().list(100).unwrap().len();
    let refusal = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let newer = refusal("newer.json", r#"{"format": "agent-host-session", "version": 2, "history": []}"#);
    let (status, _, stderr) = console_with(dir, &["--import", newer.to_str().unwrap()], "").await;
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "--import {}: field `version`: the document is version 2, newer",
            newer.display()
        )),
        "{stderr}"
    );
    let broken =
        refusal("broken.json", "{\"format\": \"agent-host-session\",\n \"version\": 1\n \"history\": []}");
    let (status, _, stderr) = console_with(dir, &["--import", broken.to_str().unwrap()], "").await;
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("(line 3, column 2)"), "{stderr}");
    let wrong_role = refusal(
        "role.json",
        r#"{"format": "agent-host-session", "version": 1, "model_calls": 0, "summaries": [], "view": null,
            "state": {}, "history": [{"message": {"role": "robot", "content": "hi"}}]}"#,
    );
    let (status, _, stderr) = console_with(dir, &["--import", wrong_role.to_str().unwrap()], "").await;
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("field `history[0].message.role`: unknown variant `robot`"), "{stderr}");
    let (status, _, stderr) = console_with(dir, &["--fork", "0000000000000000"], "").await;
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("no session with id `0000000000000000`"), "{stderr}");
    assert_eq!(test.host.sessions().store().list(100).unwrap().len(), sessions_before);
}

#[tokio::test]
async fn a_console_export_writes_none_of_the_hosts_files_follows_no_link_and_replaces_only_when_forced() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, "").await;
    let dir = test.dir.path();
    let store = test.db_path();
    let config = dir.join("config.toml");
    let config_before = std::fs::read(&config).unwrap();
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "the operator's file").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let existing = dir.join("existing.json");
    std::fs::write(&existing, "kept").unwrap();
    let fresh = dir.join("fresh.json");
    let lines = [
        format!("/export {}", store.display()),
        format!("/export {}", config.display()),
        format!("/export --force {}-wal", store.display()),
        format!("/export {}", link.display()),
        format!("/export --force {}", link.display()),
        format!("/export {}", existing.display()),
    ];
    let (status, _, stderr) = console_with(dir, &[], &format!("{}\n", lines.join("\n"))).await;
    assert_eq!(status, Some(0), "{stderr}");
    assert!(std::fs::read(&store).unwrap().starts_with(b"SQLite format 3\0"), "the store was overwritten");
    assert_eq!(std::fs::read(&config).unwrap(), config_before, "the config was overwritten");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the operator's file", "the link was followed");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "kept", "an existing file was replaced");
    let refusals: Vec<&str> = stderr.lines().filter(|line| line.starts_with("/export refused")).collect();
    assert_eq!(refusals.len(), lines.len(), "{stderr}");
    assert!(refusals[0].contains("the session store"), "{stderr}");
    assert!(refusals[1].contains("the config file"), "{stderr}");
    assert!(refusals[2].contains("the session store's journal"), "{stderr}");
    assert!(refusals[3].contains("symbolic link") && refusals[4].contains("symbolic link"), "{stderr}");
    assert!(refusals[5].contains("exists") && refusals[5].contains("/export --force"), "{stderr}");

    let (status, stdout, stderr) = console_with(
        dir,
        &[],
        &format!("/export --force {}\n/export {}\n", existing.display(), fresh.display()),
    )
    .await;
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(stdout.matches("written to").count(), 2, "{stdout}\n{stderr}");
    for written in [&existing, &fresh] {
        let document: Value = serde_json::from_str(&std::fs::read_to_string(written).unwrap()).unwrap();
        assert_eq!(document["format"], "agent-host-session");
    }
}

/// What the tool message of the last model request said.
fn last_tool_output(model: &FakeModel) -> String {
    let last = model.requests().last().cloned().expect("a request");
    let messages = last["messages"].as_array().unwrap().clone();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").expect("a tool message");
    tool["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_imported_document_brings_no_standing_approvals_unless_asked_and_says_what_it_dropped() {
    let model = FakeModel::start().await;
    let plugins =
        format!("{}{}", plugin_block("misbehave", ""), plugin_block("permissions", "[plugin.config]\n"));
    let test = TestHost::with_plugins(&model, &plugins).await;
    let dir = test.dir.path();
    // A session where the operator answered "always" to `touch`: its document carries the
    // host's approvals namespace, as a hand-made one could.
    let session = test.session();
    let approver =
        crate::support::ScriptedApprover::new([agent_host::agent::ApprovalAnswer::AllowToolAlways]);
    model.push(Reply::tool("touch", "{}"));
    model.push(Reply::text("done"));
    test.host.run_turn(&mut *session.lock().await, "touch it", &*test.events, &approver).await.unwrap();
    assert_eq!(last_tool_output(&model), "touched");
    let id = session.lock().await.id().to_owned();
    drop(session);
    let text = exported(&dir.join("sessions.db"), &id);
    assert!(text.contains("agent-host.approvals"), "{text}");
    let file = dir.join("approved.json");
    std::fs::write(&file, &text).unwrap();

    // Nobody is there to answer under --json: `agent.on_ask` (deny) decides, and a refused
    // call ends the turn.
    model.push(Reply::tool("touch", "{}"));
    let mut command = json_prompt_command(dir, None, "touch it again");
    command.args(["--import", file.to_str().unwrap()]);
    let output = command.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(touch_results(&stdout), [false], "the imported approval was not honoured: {stdout}");
    assert!(stderr.contains("agent-host.approvals"), "says what was dropped: {stderr}");
    assert!(stderr.contains("--import-host-state"), "and how to keep it: {stderr}");

    // Asked for, the host's state comes along.
    model.push(Reply::tool("touch", "{}"));
    model.push(Reply::text("done"));
    let mut command = json_prompt_command(dir, None, "touch it again");
    command.args(["--import", file.to_str().unwrap(), "--import-host-state"]);
    let output = command.output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(touch_results(&stdout), [true], "{stdout}");
}

/// Whether each `touch` call of a `--json` run's events ran.
fn touch_results(stdout: &str) -> Vec<bool> {
    stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["type"] == "tool_result" && event["name"] == "touch")
        .map(|event| event["ok"] == true)
        .collect()
}
