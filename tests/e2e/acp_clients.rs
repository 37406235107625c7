//! `agent-host acp` driven by ACP clients other teams wrote, on the stock deployment against
//! the scripted model: the conformance linter `acplint` through all its categories, and the
//! headless client `acpx` running a todo turn. Both are installed once per machine by
//! `scripts/install-acp-clients.sh` (pinned versions, into a cached folder). acplint 0.1.0
//! reads some of v1 otherwise than its schema does; the agent reads acplint's two requests of
//! that kind as v1 means them (`acp/transport.rs`), and the checks that cannot pass are listed
//! below with the reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use serde_json::Value;

use crate::stock_config::{plugin_entry, stock_table};
use crate::support::{FakeModel, Reply, plugin_wasm, repo_root};

/// Where the installed clients are.
struct AcpClients {
    /// acplint's console script, in its virtual environment.
    acplint: PathBuf,
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
        AcpClients {
            acplint: home.join("venv/bin/acplint"),
            acpx: home.join("npm/node_modules/acpx/dist/cli.js"),
        }
    })
}

/// The shipped deployment (todo, agent-mode, permissions) against `model`, with the test
/// plugins named in `more` after them, in a folder of its own: `config.toml` there, the
/// database beside it.
fn deployment(model: &FakeModel, more: &[&str]) -> tempfile::TempDir {
    deployment_of(stock_table(model), more)
}

/// [`deployment`] of the stock table `config` as a test changed it.
fn deployment_of(mut config: toml::Table, more: &[&str]) -> tempfile::TempDir {
    let plugins = config.get_mut("plugin").and_then(|p| p.as_array_mut()).expect("the stock plugins");
    for name in more {
        let mut entry = toml::Table::new();
        entry.insert("path".into(), plugin_wasm(name).display().to_string().into());
        plugins.push(entry.into());
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), toml::to_string(&config).unwrap()).unwrap();
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

/// acplint's checks that no agent on the `agent-client-protocol` crate can pass, because
/// acplint 0.1.0 reads ACP v1 otherwise than the protocol's schema (and the crate, and Zed)
/// does; each with what acplint does and what v1 says. The test asserts these are exactly the
/// checks that fail, so a check that starts passing, or a new failure, is seen.
const LINTER_DIVERGES: &[(&str, &str, &str)] = &[
    (
        "initialization",
        "initialize_v1",
        "acplint wants `protocolVersion` answered as the string \"1\"; v1's is an integer (uint16), which the agent answers",
    ),
    ("initialization", "protocol_version_returned", "the same string \"1\" for the integer 1"),
    ("schema_validation", "schema_initialize", "the same string \"1\" for the integer 1"),
    (
        "streaming",
        "agent_message_chunk_received",
        "acplint counts `sessionUpdate: \"agentMessageChunk\"`; v1's discriminator is snake_case: `agent_message_chunk`",
    ),
    (
        "plans",
        "plan_schema_valid",
        "acplint reads the entries from `update.plan.entries`; v1's plan update carries `entries` on the update itself",
    ),
    (
        "session_lifecycle",
        "new_session",
        "acplint requires a `label` on each of session/new's `configOptions`; v1's config option has `name`",
    ),
    (
        "schema_validation",
        "schema_session_new",
        "the same `label` for `name` in session/new's `configOptions`",
    ),
];

/// acplint's checks that pass only because what they look for never comes: the editor's
/// `fs/*` and `terminal/*`, which the host never calls (file edits and commands stay in its own
/// sandboxed tools, where the grants and the OS sandbox apply: README, "Editors"), and the
/// updates acplint looks for under camelCase names (`toolCall`, `agentThoughtChunk`), which
/// v1 spells `tool_call`, `agent_thought_chunk`. Each is asserted to pass with acplint's note
/// that none came.
const PASS_FOR_WANT_OF_A_MESSAGE: &[(&str, &str, &str)] = &[
    ("file_operations", "read_text_file_request_received", "No fs/read_text_file request received"),
    ("file_operations", "write_text_file_request_received", "No fs/write_text_file request received"),
    ("terminals", "terminal_create_received", "No terminal/create request received"),
    ("tool_calls", "tool_call_notification_received", "No toolCall notifications received"),
    ("streaming", "agent_thought_chunk_received", "No agentThoughtChunk updates received"),
    // acplint answers every `session/request_permission` itself, before its check looks, so
    // the check never sees one (and its answer lacks v1's `outcome: "selected"`: see below).
    ("permissions", "permission_request_received", "No permission request received"),
];

/// Every category acplint 0.1.0 has.
const CATEGORIES: [&str; 14] = [
    "initialization",
    "authentication",
    "session_lifecycle",
    "streaming",
    "tool_calls",
    "permissions",
    "file_operations",
    "terminals",
    "plans",
    "session_modes",
    "config_options",
    "cancel",
    "stress",
    "schema_validation",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acplint_passes_every_check_but_those_it_reads_otherwise_than_acp_v1() {
    let model = FakeModel::start().await;
    // acplint's prompts, answered by what they ask for: a greeting (with reasoning), a file
    // read by a tool call, a write by a tool the permissions preset asks about, and a plan as a
    // todo list; every other prompt gets "ok".
    model.on_prompt("Say 'hello'", [Reply::text("hello").reasoning("A greeting is asked for.")]);
    model.on_prompt(
        "Read the file",
        [Reply::tool("recall", "{}"), Reply::text("Nothing is stored; I have no file tool here.")],
    );
    model.on_prompt(
        "Write 'test'",
        [Reply::tool("remember", r#"{"key":"test","value":"test"}"#), Reply::text("Stored, if allowed.")],
    );
    model.on_prompt(
        "Create a simple plan",
        [
            Reply::tool("todos_add", r#"{"todos":[{"title":"Read a file"},{"title":"Summarize it"}]}"#),
            Reply::tool(
                "todos_complete",
                r#"{"items":[{"id":1,"reason":"read"},{"id":2,"reason":"summed up"}]}"#,
            ),
            Reply::text("The plan is done."),
        ],
    );
    model.fallback(Reply::text("ok"));
    // `misbehave`'s `recall` reads and `remember` writes, which a rule asks about; sessions
    // start in execute mode, where writing is allowed at all.
    let mut config = stock_table(&model);
    let settings = |config: &mut toml::Table, package: &str| -> toml::Table {
        let entry = plugin_entry(config, package);
        entry.get("config").and_then(|c| c.as_table()).cloned().unwrap_or_default()
    };
    let mut agent_mode = settings(&mut config, "agent-mode");
    agent_mode.insert("default_mode".into(), "execute".into());
    plugin_entry(&mut config, "agent-mode").insert("config".into(), agent_mode.into());
    let mut permissions = settings(&mut config, "permissions");
    let rule: toml::Table = toml::from_str(
        r#"tool = "remember"
decision = "ask""#,
    )
    .unwrap();
    permissions.get_mut("rules").and_then(|r| r.as_array_mut()).expect("the stock rules").push(rule.into());
    plugin_entry(&mut config, "permissions").insert("config".into(), permissions.into());
    let dir = deployment_of(config, &["misbehave"]);
    let report_path = dir.path().join("acplint.json");

    let output = client(&acp_clients().acplint)
        .arg("--agent")
        .arg(env!("CARGO_BIN_EXE_agent-host"))
        .arg("--agent-args")
        .arg(agent_args(dir.path()))
        .arg("--cwd")
        .arg(dir.path())
        .args(["--output", "json", "--output-file"])
        .arg(&report_path)
        .output()
        .await
        .expect("acplint runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap_or_default())
        .unwrap_or_else(|error| panic!("acplint wrote no JSON report ({error}); stderr: {stderr}"));
    let results = report["results"].as_array().expect("the report lists its results");
    let name = |result: &Value| {
        (result["category"].as_str().unwrap().to_owned(), result["name"].as_str().unwrap().to_owned())
    };

    // Every category ran.
    let ran: BTreeSet<&str> = results.iter().filter_map(|r| r["category"].as_str()).collect();
    let not_passed: Vec<&Value> = results.iter().filter(|r| r["status"] != "PASS").collect();
    assert_eq!(ran, CATEGORIES.into_iter().collect(), "every category ran; not passed: {not_passed:#?}");

    // The failures are exactly the linter's own misreadings of v1.
    let failed: BTreeSet<(String, String)> =
        results.iter().filter(|r| r["status"] != "PASS").map(name).collect();
    let expected: BTreeSet<(String, String)> = LINTER_DIVERGES
        .iter()
        .map(|(category, check, _)| ((*category).to_owned(), (*check).to_owned()))
        .collect();
    let unexpected: Vec<&Value> =
        results.iter().filter(|r| r["status"] != "PASS" && !expected.contains(&name(r))).collect();
    assert!(unexpected.is_empty(), "checks failing that should pass: {unexpected:#?}");
    assert_eq!(failed, expected, "the checks acplint gets wrong fail, and only those");

    // The editor's fs/* and terminal/* were never called: those checks pass for want of one.
    for (category, check, note) in PASS_FOR_WANT_OF_A_MESSAGE {
        let result = results
            .iter()
            .find(|r| r["category"] == *category && r["name"] == *check)
            .unwrap_or_else(|| panic!("acplint ran {category}/{check}"));
        assert_eq!(result["status"], "PASS");
        assert!(result["message"].as_str().is_some_and(|m| m.starts_with(note)), "{result:#}");
    }
    let coverage = results
        .iter()
        .find(|r| r["name"] == "coverage_methods_exercised")
        .expect("acplint sums up what it saw");
    let asked: Vec<&str> = coverage["details"]["agent_request_methods_seen"]
        .as_array()
        .expect("the methods the agent called on the client")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !asked.iter().any(|method| method.starts_with("fs/") || method.starts_with("terminal/")),
        "the host never used the editor's files or terminals: {asked:?}"
    );

    // The plan prompt's todo list arrived as a plan (whose entries acplint looks for elsewhere).
    let passed = |category: &str, check: &str| {
        results.iter().any(|r| r["category"] == category && r["name"] == check && r["status"] == "PASS")
    };
    assert!(passed("plans", "plan_notification_received"));
    let plan_failure = results.iter().find(|r| r["name"] == "plan_schema_valid").expect("a plan came");
    assert!(plan_failure["details"]["raw_plan"].is_object(), "{plan_failure:#}");
    // Each scripted prompt reached the host's turn and the model.
    let prompts: Vec<String> = model
        .requests()
        .iter()
        .filter_map(|r| {
            r["messages"]
                .as_array()?
                .iter()
                .rev()
                .find(|m| m["role"] == "user")
                .map(|m| m["content"].to_string())
        })
        .collect();
    for phrase in ["Say 'hello'", "Read the file", "Write 'test'", "Create a simple plan"] {
        assert!(prompts.iter().any(|p| p.contains(phrase)), "the model was asked {phrase:?}: {prompts:#?}");
    }
    // The write was asked about; acplint's answer (`{"outcome": {"optionId": …}}`, without v1's
    // `"outcome": "selected"`) is no answer v1 knows, so the host refused the call: an answer it
    // cannot read never allows.
    let results_sent: Vec<String> = model
        .requests()
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert!(
        results_sent.iter().any(|r| r.contains("refused by operator")),
        "the asked write was refused: {results_sent:#?}"
    );
    assert!(!results_sent.iter().any(|r| r.contains("values remembered")), "nothing was stored");
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
    let dir = deployment(&model, &[]);
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
