//! `turn_ended.iterations` is the number of model calls the turn made, whichever way it
//! ended: the `iteration` of its last `model_request`. (No stock or test plugin blocks a
//! prompt, so `blocked`, which ends before any model call, is not run here.)

use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::validated_lines;
use crate::support::{FakeModel, Reply, config_text, json_prompt_command, plugin_block};

/// A deployment with misbehave only (tools `echo`, `remember`), at most 6 iterations.
fn deployment(model: &FakeModel) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let config = config_text(&model.url(), &plugin_block("misbehave", ""));
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    dir
}

fn command(dir: &tempfile::TempDir) -> tokio::process::Command {
    let mut command = json_prompt_command(dir.path(), None, "go");
    command.env("AGENT_HOST_TEST_KEY", "test-key").stdin(std::process::Stdio::null());
    command
}

/// The run's `turn_ended` reason and iterations, and how many `model_request`s it sent.
fn ending(output: &Output) -> (String, u64, usize) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let events = validated_lines(&stdout);
    let ended: Vec<&Value> = events.iter().filter(|e| e["type"] == "turn_ended").collect();
    assert_eq!(ended.len(), 1, "one turn_ended:\n{stdout}");
    let requests = events.iter().filter(|e| e["type"] == "model_request").count();
    (ended[0]["reason"].as_str().unwrap().to_owned(), ended[0]["iterations"].as_u64().unwrap(), requests)
}

fn echo() -> Reply {
    Reply::tool("echo", r#"{"text":"again"}"#)
}

#[tokio::test]
async fn a_turn_that_is_done_reports_its_model_calls() {
    let model = FakeModel::start().await;
    model.push(echo()).push(echo()).push(Reply::text("done"));
    let output = command(&deployment(&model)).output().await.unwrap();
    assert_eq!(ending(&output), ("done".into(), 3, 3));
}

#[tokio::test]
async fn a_turn_that_reaches_max_iterations_reports_them_all() {
    let model = FakeModel::start().await;
    model.fallback(echo());
    let output = command(&deployment(&model)).output().await.unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(ending(&output), ("max_iterations".into(), 6, 6));
}

/// Fails before the fix in agent/turn/: the front end reports 0.
#[tokio::test]
async fn a_turn_that_fails_on_its_second_model_call_reports_two() {
    let model = FakeModel::start().await;
    model.push(echo()).push(Reply::status(400));
    let output = command(&deployment(&model)).output().await.unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(ending(&output), ("error".into(), 2, 2));
}

/// Fails before the fix in agent/turn/: the front end reports 0.
#[tokio::test]
async fn a_turn_cancelled_during_its_second_model_call_reports_two() {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    model.push(echo()).push(Reply::text("too late").held_until(&gate));
    let dir = deployment(&model);
    let child = command(&dir).spawn().unwrap();
    let pid = child.id().expect("the child runs").to_string();
    for _ in 0..600 {
        if model.requests().len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(model.requests().len(), 2, "the second model call is in flight");
    // Ctrl-C, as a terminal sends it; `kill` keeps `unsafe` out of the tests.
    let sent = std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(sent.success(), "SIGINT reached the host");
    let output = child.wait_with_output().await.unwrap();
    gate.notify_waiters();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(ending(&output), ("cancelled".into(), 2, 2));
}
