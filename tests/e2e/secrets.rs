//! The API key never leaves the `Authorization` header. The real binary runs with a known
//! fake key through every path that prints or stores something — tool calls, a plugin that
//! traps, a plugin asking for the key's variable, a shell command hunting for the key in
//! the host's environment and files, `--json` events, trace logging, the console,
//! the permissions plugin's audit file, a rejected key (401), server errors retried until
//! they run out, and an endpoint that echoes the key back — then every byte the runs wrote
//! (stdout, stderr, and every file in the deployment's folder: SQLite with its journal, the
//! audit log) is scanned for the key.

use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::support::{FakeModel, Reply, TestHost, config_text, contains, files_under, plugin_block};

/// Unique enough that finding it anywhere can only mean a leak.
const KEY: &str = "sk-agent-host-fake-7c1e9b24d05f";
/// The variable `config_text` names in `[model].api_key_env`.
const KEY_ENV: &str = "AGENT_HOST_TEST_KEY";

/// Runs the binary on the deployment in `dir` with the key set; `input` goes to stdin.
async fn run(dir: &Path, args: &[&str], log: Option<&str>, input: &str) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("RUST_LOG")
        .env(KEY_ENV, KEY)
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(filter) = log {
        command.env("RUST_LOG", filter);
    }
    let mut child = command.spawn().expect("the binary starts");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    child.wait_with_output().await.unwrap()
}

fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}")))
        .collect()
}

/// The `message` of every `error` event.
fn error_events(output: &Output) -> Vec<String> {
    json_lines(output)
        .iter()
        .filter(|e| e["type"] == "error")
        .map(|e| e["message"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_key_appears_in_no_output_of_any_path() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit");
    std::fs::create_dir(&audit).unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    let plugins = format!(
        "{}{}{}",
        plugin_block("misbehave", ""),
        plugin_block(
            "shell",
            &format!(
                "[plugin.grants]\nprocess = true\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}",
                workspace.display()
            )
        ),
        plugin_block(
            "permissions",
            &format!(
                "[plugin.config]\npreset = \"trust\"\naudit = true\n[plugin.grants.dirs]\n\"/audit\" = {{ host = \"{}\", write = true }}",
                audit.display()
            )
        )
    );
    let config = config_text(&model.url(), &plugins);
    // Compile the components into the shared cache first: a cranelift compile traced at
    // `trace` level writes gigabytes, and what is scanned here is the host's own output.
    TestHost::new(&config).await.expect("the deployment loads");
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let trace = Some("trace");
    let mut outputs = Vec::new();

    // Tool calls that work, one that traps, one that asks for the key's variable, a shell
    // command that hunts for the key where the host keeps it; trace logs.
    let hunt = serde_json::json!({
        "command": format!(
            "echo ${KEY_ENV}; tr '\\0' '\\n' < /proc/$PPID/environ; cat /proc/*/environ; \
             bash -c 'cat /proc/[0-9]*/environ'; cat ../config.toml ../sessions.db; echo hunted"
        )
    });
    model
        .push(
            Reply::tool("remember", r#"{"key":"k","value":"v"}"#)
                .and_tool("echo", r#"{"text":"hi"}"#)
                .and_tool("env", &format!(r#"{{"target":"{KEY_ENV}"}}"#))
                .and_tool("trap", "{}")
                .and_tool("shell", &hunt.to_string()),
        )
        .push(Reply::text("All done."));
    let output = run(dir.path(), &["--json", "--prompt", "do things"], trace, "").await;
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let events = json_lines(&output);
    let id = events[0]["session_id"].as_str().expect("a session id").to_owned();
    let results: Vec<&Value> = events.iter().filter(|e| e["type"] == "tool_result").collect();
    assert_eq!(results.len(), 5, "{events:#?}");
    assert_eq!(results[2]["output"], format!("env {KEY_ENV}: environment variable not found"));
    let hunted = results[4]["output"].as_str().unwrap_or_default();
    assert!(hunted.contains("hunted") && hunted.contains("exit status: 0"), "the hunt ran: {hunted}");
    assert!(error_events(&output).iter().any(|m| m.contains("plugin misbehave@0.1.0 trapped")));
    outputs.push(output);

    // A rejected key: the error names the variable.
    model.push(Reply::status(401));
    let output = run(dir.path(), &["--json", "--session", &id, "--prompt", "again"], trace, "").await;
    assert_eq!(output.status.code(), Some(1));
    assert!(error_events(&output).iter().any(|m| m.contains(&format!("check the variable `{KEY_ENV}`"))));
    outputs.push(output);

    // Server errors, retried (each retry logged) until they run out.
    model.push(Reply::status(500)).push(Reply::status(500)).push(Reply::status(500));
    let output = run(dir.path(), &["--json", "--session", &id, "--prompt", "again"], trace, "").await;
    assert_eq!(output.status.code(), Some(1));
    assert!(error_events(&output).iter().any(|m| m.contains("HTTP 500 after 3 attempt(s)")));
    assert!(String::from_utf8_lossy(&output.stderr).contains("model call failed; retrying"));
    outputs.push(output);

    // An endpoint that quotes the request's Authorization header in its error body.
    for _ in 0..3 {
        model.push(Reply::status_echoing_auth(502));
    }
    let output = run(dir.path(), &["--json", "--session", &id, "--prompt", "again"], trace, "").await;
    assert_eq!(output.status.code(), Some(1));
    let errors = error_events(&output);
    assert!(errors.iter().any(|m| m.contains("you sent: Bearer [redacted]")), "the echo arrived: {errors:?}");
    outputs.push(output);

    // The console, with the binary's own verbosity flag, and the operator's commands.
    model.push(Reply::tool("echo", r#"{"text":"from the console"}"#)).push(Reply::text("Hello."));
    let output = run(dir.path(), &["-vv", "--session", &id], None, "hello\n/plugins\n/session\n").await;
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("Hello."));
    outputs.push(output);
    outputs.push(run(dir.path(), &["sessions"], trace, "").await);

    // Not vacuous: the key was in use on every request, and there were logs, events, an
    // audit trail and a database to scan.
    let authorizations = model.authorizations();
    assert_eq!(authorizations.len(), 2 + 1 + 3 + 3 + 2);
    assert!(authorizations.iter().all(|a| a.as_deref() == Some(&format!("Bearer {KEY}") as &str)));
    let audit_lines =
        std::fs::read_to_string(audit.join("audit.jsonl")).expect("the audit log").lines().count();
    assert_eq!(audit_lines, 12, "two audit lines per tool call (decided and finished), six calls");
    let files = files_under(dir.path());
    assert!(files.iter().any(|(name, _)| name.to_string_lossy().ends_with("sessions.db")), "{files:?}");

    let mut scanned = 0;
    for (index, output) in outputs.iter().enumerate() {
        for (stream, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
            scanned += bytes.len();
            assert!(
                !contains(bytes, KEY.as_bytes()),
                "the key leaked on the {stream} of run {index}:\n{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
    for (name, bytes) in &files {
        scanned += bytes.len();
        assert!(!contains(bytes, KEY.as_bytes()), "the key leaked into {}", name.display());
    }
    eprintln!("secrets: {} runs, {} files, {scanned} bytes scanned, 0 hits", outputs.len(), files.len());
}
