//! Acting in the operator's place is granted, never implied by an export (issue 47, M2 and
//! L6). A judge whose `review` approves runs a call the permission policy would have put to
//! the operator, with nobody asked; one whose `queued` starts a turn after any command spends
//! calls the operator never sent. So a plugin that implements either needs `review = true`
//! or `start_turns = true` under its `[plugin.grants]`: without it the real binary refuses to
//! start, naming the grant, before anything reaches the model. With it, every start says
//! which plugin may act so, and an approval reads on the console as the reviewer's.

use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, config_text, plugin_block, source_plugin_block};

/// The permission policy asks about every `note`; nobody can answer, and `on_ask` refuses.
fn deployment(model: &FakeModel, judge: &str) -> tempfile::TempDir {
    let rules = "[plugin.config]\nrules = [{ tool = \"note\", decision = \"ask\", reason = \"notes need a look\" }]\n";
    let plugins = format!("{}{judge}", plugin_block("permissions", rules));
    let config = config_text(&model.url(), &plugins).replace("[agent]\n", "[agent]\non_ask = \"deny\"\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    dir
}

fn judge_py(grants: &str) -> String {
    source_plugin_block("testing/judge-py", grants)
}

/// The model asks for the note the judge let through, then ends.
fn script(model: &FakeModel) {
    model.push(Reply::tool("note", &json!({ "text": "touch X && rm -rf victim" }).to_string()));
    model.push(Reply::text("done"));
}

/// The real binary on the deployment in `dir`, with `args`.
async fn run(dir: &Path, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("NO_COLOR", "1")
        .env("AGENT_HOST_TEST_KEY", "test-key")
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap()
}

const JSON_PROMPT: &[&str] = &["--json", "--prompt", "go"];

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The binary refused to start for the plugin at `entry`, naming `export` and `grant`, and
/// never asked the model anything.
fn refused(output: &Output, model: &FakeModel, entry: &str, export: &str, grant: &str) {
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stdout: {}\nstderr: {stderr}", text(&output.stdout));
    assert!(stderr.contains(entry), "the error points at the plugin's entry: {stderr}");
    assert!(stderr.contains(&format!("implements `{export}`")), "{stderr}");
    assert!(stderr.contains(&format!("add `{grant}` under its [plugin.grants]")), "{stderr}");
    assert!(model.requests().is_empty(), "nothing ran: {:?}", model.requests());
}

#[tokio::test]
async fn a_judge_without_the_review_grant_is_refused_at_start_and_approves_nothing() {
    for judge in ["testing/judge-py", "testing/judge-ts"] {
        let model = FakeModel::start().await;
        script(&model);
        let dir = deployment(&model, &source_plugin_block(judge, ""));
        let output = run(dir.path(), JSON_PROMPT).await;
        refused(&output, &model, "plugin[1]", "review", "review = true");
    }
}

#[tokio::test]
async fn a_plugin_that_queues_turns_without_the_start_turns_grant_is_refused() {
    // judge-py reviews and queues: granted the one, it is refused for the other.
    let model = FakeModel::start().await;
    let dir = deployment(&model, &judge_py("[plugin.grants]\nreview = true\n"));
    let output = run(dir.path(), JSON_PROMPT).await;
    refused(&output, &model, "plugin[1]", "queued", "start_turns = true");

    // The stock goal only queues, and its model grant is not that one.
    let model = FakeModel::start().await;
    let dir = deployment(&model, &plugin_block("goal", "[plugin.grants]\nmodel = true\n"));
    let output = run(dir.path(), JSON_PROMPT).await;
    refused(&output, &model, "plugin[1]", "queued", "start_turns = true");
}

const GRANTED: &str = "[plugin.grants]\nreview = true\nstart_turns = true\n";

#[tokio::test]
async fn a_granted_judge_is_named_at_start_and_its_approval_is_shown_as_its_own() {
    let model = FakeModel::start().await;
    script(&model);
    let dir = deployment(&model, &judge_py(GRANTED));
    let output = run(dir.path(), &["--prompt", "go"]).await;
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stderr.contains(
            "note: judge-py@0.1.0 may approve, in the operator's place, calls the permission policy \
             would ask the operator about (granted `review = true`)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "note: judge-py@0.1.0 may start a turn of model and tool calls after any operator command \
             (granted `start_turns = true`)"
        ),
        "{stderr}"
    );
    assert!(
        stdout.contains(
            "note approved by review of judge-py@0.1.0, in your place (the policy asks: notes need a look)"
        ),
        "the console names who approved, and why the operator would have been asked: {stdout}"
    );

    // The event says the same to a program: the decision, and who took it.
    script(&model);
    let output = run(dir.path(), JSON_PROMPT).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let decisions: Vec<Value> = crate::event_schema::validated_lines(&text(&output.stdout))
        .into_iter()
        .filter(|event| event["type"] == "tool_decision")
        .collect();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0]["decision"], "allow_by_review");
    assert_eq!(decisions[0]["decided_by"], "judge-py@0.1.0");

    // `check` lists every plugin's grants.
    let check = run(dir.path(), &["check", "--offline"]).await;
    let listed = text(&check.stdout);
    assert!(check.status.success(), "{}", text(&check.stderr));
    let line = listed.lines().find(|line| line.starts_with("judge-py@")).unwrap_or_default();
    assert!(line.ends_with("; granted: review, start_turns"), "{listed}");
}
