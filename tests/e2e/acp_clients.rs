//! `agent-host acp` driven by an ACP client another team wrote, on the stock deployment
//! against the scripted model: the headless client `acpx` running a todo turn. It is
//! installed once per machine by `scripts/install-acp-clients.sh` (pinned, into a cached
//! folder), with the conformance linter `acplint`, whose run is not a test yet: acplint 0.1.0
//! sends `initialize` a string protocol version, which the crate refuses (issue 31's note).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use serde_json::Value;

use crate::stock_config::stock_config;
use crate::support::{FakeModel, Reply, repo_root};

/// Where the installed clients are.
struct AcpClients {
    /// acpx's entry script, run with `node`.
    acpx: PathBuf,
}

/// The clients, installed first when missing: a test never skips for want of one.
fn acp_clients() -> &'static AcpClients {
    static CLIENTS: OnceLock<AcpClients> = OnceLock::new();
    CLIENTS.get_or_init(|| {
        let status = std::process::Command::new("bash")
            .arg(repo_root().join("scripts/install-acp-clients.sh"))
            .status()
            .expect("bash runs the install script");
        assert!(status.success(), "installing the ACP clients failed: {status}");
        let home = std::env::var_os("AGENT_HOST_ACP_HOME").map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/agent-host/acp")
        });
        AcpClients { acpx: home.join("npm/node_modules/acpx/dist/cli.js") }
    })
}

/// The shipped deployment (todo, agent-mode, permissions) against `model`, in a folder of
/// its own: `config.toml` there, the database beside it.
fn deployment(model: &FakeModel) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), stock_config(model)).unwrap();
    dir
}

/// `acp --config <dir>/config.toml`, the agent's arguments as a client is given them (both
/// clients split on whitespace; a test folder has none).
fn agent_args(dir: &Path) -> String {
    let config = dir.join("config.toml");
    let config = config.to_str().expect("a UTF-8 path");
    assert!(!config.contains(char::is_whitespace), "the clients split the agent's command on whitespace");
    format!("acp --config {config}")
}

/// A client as a child process: the model key the deployment names set, the OpenAI
/// variables of the test's own environment removed, output piped, killed with its handle.
fn client(program: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command
        .env("AGENT_HOST_TEST_KEY", "k")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// Every JSON line acpx printed (it prints each ACP message it sends and receives).
fn ndjson(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("acpx printed a non-JSON line ({e}): {line}"))
        })
        .collect()
}

/// The `(content, status)` of each entry of every `plan` update, in order.
fn plans(messages: &[Value]) -> Vec<Vec<(String, String)>> {
    messages
        .iter()
        .filter(|m| m["method"] == "session/update" && m["params"]["update"]["sessionUpdate"] == "plan")
        .map(|m| {
            let entries = m["params"]["update"]["entries"].as_array().expect("a plan update has entries");
            entries
                .iter()
                .map(|e| {
                    (e["content"].as_str().unwrap().to_owned(), e["status"].as_str().unwrap().to_owned())
                })
                .collect()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acpx_runs_a_todo_turn_and_shows_the_plan_and_the_stop_reason() {
    let model = FakeModel::start().await;
    model
        .push(Reply::tool("todos_add", r#"{"todos":[{"title":"Write the note"},{"title":"Proofread it"}]}"#));
    model.push(Reply::tool(
        "todos_complete",
        r#"{"items":[{"id":1,"reason":"written"},{"id":2,"reason":"proofread"}]}"#,
    ));
    model.push(Reply::text("Both done."));
    let dir = deployment(&model);
    let agent = format!("{} {}", env!("CARGO_BIN_EXE_agent-host"), agent_args(dir.path()));

    // `exec`: acpx's one-shot run. Its bare `acpx --agent … "prompt"` form prompts a saved
    // session and exits 4 (NO_SESSION) when none was made; `exec` makes one for the run and
    // keeps no queue owner process behind. acpx's own state goes under the test's HOME.
    let output = client(Path::new("node"))
        .arg(&acp_clients().acpx)
        .arg("--agent")
        .arg(&agent)
        .arg("--cwd")
        .arg(dir.path())
        .args(["--format", "json", "--deny-all", "exec", "Write a release note, with a plan."])
        .env("HOME", dir.path())
        .output()
        .await
        .expect("acpx runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "acpx: {}; stdout: {stdout}; stderr: {stderr}", output.status);
    let messages = ndjson(&output.stdout);

    let plans = plans(&messages);
    let entry = |content: &str, status: &str| (content.to_owned(), status.to_owned());
    assert!(
        plans.contains(&vec![entry("Write the note", "pending"), entry("Proofread it", "pending")]),
        "the plan as added: {plans:?}"
    );
    assert_eq!(
        plans.last(),
        Some(&vec![entry("Write the note", "completed"), entry("Proofread it", "completed")]),
        "the plan at the end: every entry, completed"
    );

    let stop_reasons: Vec<&Value> = messages.iter().filter_map(|m| m["result"].get("stopReason")).collect();
    assert_eq!(stop_reasons, [&Value::from("end_turn")], "one prompt, ended by the model");
    let said: String = messages
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(said, "Both done.");
    assert!(
        !messages.iter().any(|m| m["method"] == "session/request_permission"),
        "the stock rules allow the todo tools: nothing was asked, so --deny-all denied nothing"
    );
    assert_eq!(model.requests().len(), 3);
}
