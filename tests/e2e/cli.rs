//! The real binary: one-shot prompts with `--json`, the scripted provider, resume by id
//! after the process exits, exit statuses.

use std::process::Command;

use serde_json::Value;

use crate::support::{FakeModel, Reply, config_text, plugin_block, refusing_plugins, repo_root};

fn agent_host() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command.env_remove("OPENAI_API_KEY").env_remove("OPENAI_BASE_URL").env("NO_COLOR", "1");
    command
}

fn json_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}")))
        .collect()
}

#[test]
fn scripted_provider_runs_a_turn_and_the_session_resumes_in_a_new_process() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("script.toml"),
        "[[turn]]\ntext = \"\"\ntool_calls = [{ name = \"remember\", arguments = { key = \"x\", value = 42 } }]\n\n[[turn]]\ntext = \"Stored.\"\n\n[[turn]]\ntext = \"\"\ntool_calls = [{ name = \"recall\" }]\n\n[[turn]]\ntext = \"Recalled.\"\n",
    )
    .unwrap();
    let config = format!(
        "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n\n[storage]\npath = \"s.db\"\n\n[runtime]\ncache_dir = \"{}\"\n\n{}",
        crate::support::shared_cache_dir().display(),
        plugin_block("misbehave", "")
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let run = |extra: &[&str]| {
        let output = agent_host()
            .arg("--config")
            .arg(dir.path().join("config.toml"))
            .args(["--json", "--prompt", "hello"])
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
        json_lines(&output.stdout)
    };
    let first = run(&[]);
    assert_eq!(first[0]["type"], "session_started");
    assert_eq!(first[0]["resumed"], false);
    let id = first[0]["session_id"].as_str().unwrap().to_owned();
    assert!(first.iter().any(|e| e["type"] == "tool_result" && e["output"] == "1 values remembered"));
    assert_eq!(first.last().unwrap()["type"], "turn_ended");

    let second = run(&["--session", &id]);
    assert_eq!(second[0]["resumed"], true);
    assert!(second.iter().any(|e| e["type"] == "tool_result" && e["output"] == r#"{"x":42}"#), "{second:#?}");
    assert!(second.iter().any(|e| e["type"] == "assistant_message" && e["text"] == "Recalled."));
}

#[tokio::test]
async fn json_stream_is_well_formed_against_a_real_http_endpoint() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("echo", r#"{"text":"hi"}"#));
    model.push(Reply::text("All done."));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), &plugin_block("misbehave", "")))
        .unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .args(["--prompt", "say hi", "--json"])
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let events = json_lines(&output.stdout);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    for expected in [
        "session_started",
        "plugin_loaded",
        "user_message",
        "injected_message",
        "model_request",
        "assistant_delta",
        "assistant_message",
        "tool_call",
        "tool_result",
        "turn_ended",
    ] {
        assert!(types.contains(&expected), "missing {expected} in {types:?}");
    }
    assert_eq!(events.last().unwrap()["reason"], "done");
}

/// Runs `--prompt hi` against `base_url` with `command` (the binary, its environment set):
/// the exit status and everything it printed.
fn prompt_against(base_url: &str, mut command: Command) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let config = config_text(base_url, &plugin_block("misbehave", ""));
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let output = command
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .args(["--prompt", "hi"])
        .output()
        .unwrap();
    let all =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), all)
}

#[test]
fn an_unreachable_endpoint_is_one_clear_line_and_exit_status_1() {
    let mut command = agent_host();
    command.env("AGENT_HOST_TEST_KEY", "sk-test-secret-never-printed");
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    let (status, all) = prompt_against("http://127.0.0.1:9/v1", command);
    assert_eq!(status, Some(1));
    assert!(
        all.contains("cannot reach the model endpoint at http://127.0.0.1:9/v1/chat/completions"),
        "{all}"
    );
    assert!(!all.contains("sk-test-secret-never-printed"), "the key leaked: {all}");
}

#[test]
fn an_endpoint_url_is_printed_without_its_password_or_query() {
    let secrets = ["hunter2", "sk-query-secret"];
    // Unreachable (port 9 on loopback), so the error names the endpoint; as the console
    // prints it, as `--json` streams it, and as the retries are logged.
    let url = "http://operator:hunter2@127.0.0.1:9/v1?api_key=sk-query-secret";
    for extra in [&[][..], &["--json"], &["-v"]] {
        let mut command = agent_host();
        command.args(extra);
        let (status, all) = prompt_against(url, command);
        assert_eq!(status, Some(1), "{all}");
        assert!(
            all.contains("cannot reach the model endpoint at http://[redacted]@127.0.0.1:9/v1?[redacted]"),
            "{extra:?}: {all}"
        );
        for secret in secrets {
            assert!(!all.contains(secret), "{extra:?}: `{secret}` was printed: {all}");
        }
    }
    // A URL the host refuses at start-up is named redacted too.
    let (status, all) =
        prompt_against("ftp://operator:hunter2@127.0.0.1:9/v1?api_key=sk-query-secret", agent_host());
    assert_eq!(status, Some(2), "{all}");
    assert!(all.contains("ftp://[redacted]@127.0.0.1:9/v1?[redacted]"), "{all}");
    for secret in secrets {
        assert!(!all.contains(secret), "`{secret}` was printed: {all}");
    }
}

#[test]
fn a_proxy_from_the_environment_is_used_and_named_when_it_fails() {
    let mut command = agent_host();
    for variable in ["NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"] {
        command.env_remove(variable);
    }
    command.env("HTTP_PROXY", "http://user:secret@127.0.0.1:9");
    // The endpoint would answer nothing either, but the request must go to the proxy (port 9
    // on loopback: nothing listens), and the error must say so.
    let (status, all) = prompt_against("http://127.0.0.1:1/v1", command);
    assert_eq!(status, Some(1));
    assert!(
        all.contains("cannot reach the model endpoint at http://127.0.0.1:1/v1/chat/completions"),
        "{all}"
    );
    assert!(all.contains("through the proxy http://127.0.0.1:9"), "{all}");
    assert!(!all.contains("secret"), "the proxy's password leaked: {all}");
}

#[test]
fn a_bad_config_exits_2_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[agent]\nmax_iterations = 0\n").unwrap();
    let output = agent_host()
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .args(["--prompt", "x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("config.toml:2: `agent.max_iterations`: must be at least 1"), "{stderr}");
}

#[test]
fn the_shipped_config_runs_the_offline_demo_without_an_endpoint() {
    let output =
        agent_host().current_dir(repo_root()).args(["--config", "config.toml", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    assert!(stderr.contains("No model endpoint configured"), "{stderr}");
    let events = json_lines(&output.stdout);
    let last_todos = events
        .iter()
        .rev()
        .find(|e| e["type"] == "plugin" && e["kind"] == "todos-changed")
        .expect("the demo drives the todo plugin");
    let items = last_todos["payload"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert!(items.iter().all(|item| item["isComplete"] == true), "{items:?}");
    assert!(
        events.iter().any(|e| e["type"] == "tool_result" && e["output"] == "plan"),
        "agent-mode answers mode_get"
    );
    assert_eq!(events.last().unwrap()["type"], "turn_ended");
}

#[test]
fn check_lists_the_loaded_plugins_or_names_the_one_that_failed() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let plugins = format!("{}{}", plugin_block("todo", ""), plugin_block("agent-mode", ""));
    std::fs::write(&config, config_text("http://127.0.0.1:9/v1", &plugins)).unwrap();
    // Offline: nothing listens at the endpoint (endpoint_check.rs checks reaching it).
    let output = agent_host().arg("--config").arg(&config).args(["check", "--offline"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(lines[0].starts_with("todo@") && lines[1].starts_with("agent-mode@"), "{stdout}");
    // The choices a new session would show, read from the plugins' views.
    assert_eq!(lines[2], "agent-mode: Mode (mode): ● plan ○ execute; switched by /mode", "{stdout}");
    assert!(
        lines[3].starts_with("model: fake at ") && lines[3].ends_with("(not contacted: --offline)"),
        "{stdout}"
    );

    let broken = format!("{plugins}{}", plugin_block("misbehave", "[plugin.config]\nfail_configure = true"));
    std::fs::write(&config, config_text("http://127.0.0.1:9/v1", &broken)).unwrap();
    let output = agent_host().arg("--config").arg(&config).args(["check", "--offline"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("misbehave"), "the error names the plugin: {stderr}");
}

#[test]
fn each_run_mode_is_a_subcommand_and_the_old_flags_still_work_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text("http://127.0.0.1:9/v1", &plugin_block("todo", ""))).unwrap();
    let run = |args: &[&str]| agent_host().arg("--config").arg(&config).args(args).output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();

    // `check` and its old spelling print the same table; only the old one adds a note.
    let new = run(&["check", "--offline"]);
    let old = run(&["--check", "--offline"]);
    assert!(new.status.success() && old.status.success(), "{}{}", text(&new.stderr), text(&old.stderr));
    let first_line =
        |output: &std::process::Output| text(&output.stdout).lines().next().unwrap_or_default().to_owned();
    assert!(first_line(&new).starts_with("todo@") && first_line(&old).starts_with("todo@"));
    assert!(!text(&new.stderr).contains("note:"), "{}", text(&new.stderr));
    assert!(text(&old.stderr).contains("note: `--check` is now `agent-host check`"), "{}", text(&old.stderr));

    // A session made by `run`, then listed by `sessions` and by the old `--list-sessions`.
    std::fs::write(dir.path().join("script.toml"), "[[turn]]\ntext = \"hello back\"\n").unwrap();
    let scripted_config = dir.path().join("scripted.toml");
    let scripted = format!(
        "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n\n[storage]\npath = \"s.db\"\n\n[runtime]\ncache_dir = \"{}\"\n",
        crate::support::shared_cache_dir().display()
    );
    std::fs::write(&scripted_config, scripted).unwrap();
    let turn = agent_host()
        .arg("--config")
        .arg(&scripted_config)
        .args(["run", "--json", "--prompt", "hello"])
        .output()
        .unwrap();
    assert!(turn.status.success(), "{}", text(&turn.stderr));
    let events = json_lines(&turn.stdout);
    let id = events.iter().find(|event| event["type"] == "session_started").unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed =
        |args: &[&str]| agent_host().arg("--config").arg(&scripted_config).args(args).output().unwrap();
    let sessions = listed(&["sessions"]);
    assert_eq!(
        text(&sessions.stdout)
            .lines()
            .map(|line| line.split_whitespace().next().unwrap())
            .collect::<Vec<_>>(),
        [id.as_str()],
        "{}",
        text(&sessions.stderr)
    );
    let old = listed(&["--list-sessions"]);
    // The same sessions; the "N s ago" beside them may have moved on between the two runs.
    let ids = |output: &std::process::Output| {
        text(&output.stdout)
            .lines()
            .map(|line| line.split_whitespace().next().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&old), ids(&sessions));
    assert!(text(&old.stderr).contains("note: `--list-sessions` is now `agent-host sessions`"));

    // A run option with another subcommand is refused, naming it.
    let refused = run(&["--prompt", "hi", "serve"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("`--prompt` does not go with `agent-host serve`"),
        "{}",
        text(&refused.stderr)
    );
}

#[test]
fn sessions_lists_each_with_its_last_use_its_size_and_its_first_prompt() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.toml"), "[[turn]]\ntext = \"hello back\"\n").unwrap();
    let config = dir.path().join("config.toml");
    let scripted = format!(
        "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n\n[storage]\npath = \"s.db\"\n\n[runtime]\ncache_dir = \"{}\"\n",
        crate::support::shared_cache_dir().display()
    );
    std::fs::write(&config, scripted).unwrap();
    let turn = |prompt: &str| {
        let output = agent_host()
            .arg("--config")
            .arg(&config)
            .args(["run", "--json", "--prompt", prompt])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let events = json_lines(&output.stdout);
        events.iter().find(|event| event["type"] == "session_started").unwrap()["session_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let first = turn("fix the build\nplease, \x1b[31mnow");
    let long = "explain ".repeat(30);
    let second = turn(&long);

    // The first made is the one used last: 3 minutes ago, the other 2 hours ago.
    let now_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let store = rusqlite::Connection::open(dir.path().join("s.db")).unwrap();
    for (id, ago_ms) in [(&first, 180_000 + 20_000), (&second, 2 * 3_600_000 + 60_000)] {
        store
            .execute(
                "UPDATE sessions SET updated_at = ?2 WHERE id = ?1",
                rusqlite::params![id, now_ms - ago_ms],
            )
            .unwrap();
    }
    drop(store);

    let output = agent_host().arg("--config").arg(&config).arg("sessions").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    let fields = |line: &str| {
        line.split("  ")
            .map(str::trim)
            .filter(|field| !field.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        fields(lines[0]),
        [first.as_str(), "3 min ago", "2 messages", "fix the build please, \\x1b[31mnow"],
        "{stdout}"
    );
    let cut = format!("{}…", long.chars().take(80).collect::<String>().trim_end());
    assert_eq!(fields(lines[1]), [second.as_str(), "2 h ago", "2 messages", cut.as_str()], "{stdout}");
    assert!(!stdout.contains('\x1b'), "{stdout:?}");

    // The same listing for programs: a JSON object a line.
    let output = agent_host().arg("--config").arg(&config).args(["sessions", "--json"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let listed = json_lines(&output.stdout);
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0]["id"], first.as_str());
    assert_eq!(listed[0]["updated_at"], (now_ms - 200_000) / 1_000);
    assert_eq!(listed[0]["messages"], 2);
    assert_eq!(listed[0]["title"], "fix the build please, \\x1b[31mnow");
    assert_eq!(listed[1]["id"], second.as_str());
    assert_eq!(listed[1]["title"], cut.as_str());
}

#[tokio::test]
async fn a_refused_call_is_shown_with_its_tool_and_arguments_before_the_refusal() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("remember", r#"{"key":"launch codes","value":1}"#));
    model.push(Reply::text("I may not."));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), &refusing_plugins())).unwrap();
    let output =
        crate::support::json_prompt_command(dir.path(), None, "remember them").output().await.unwrap();
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let events = json_lines(&output.stdout);
    let position = |kind: &str| events.iter().position(|e| e["type"] == kind);
    let call =
        position("tool_call").unwrap_or_else(|| panic!("a tool_call for the refused call: {events:#?}"));
    assert_eq!(events[call]["name"], "remember");
    assert_eq!(events[call]["plugin"], "misbehave");
    assert_eq!(events[call]["arguments"], serde_json::json!({"key": "launch codes", "value": 1}));
    assert_eq!(events[call]["refused"], true, "a front end knows it will not run: {}", events[call]);
    let decision = position("tool_decision").expect("the refusal");
    assert_eq!(
        (events[decision]["decision"].as_str(), events[decision]["id"].clone()),
        (Some("deny"), events[call]["id"].clone())
    );
    let result = position("tool_result").expect("the result");
    assert!(call < decision && decision < result, "{events:#?}");
    assert_eq!(events[result]["ok"], false);
}

#[tokio::test]
async fn a_retry_after_a_failed_turn_sends_no_two_user_messages_in_a_row() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    std::fs::write(&config, config_text("http://127.0.0.1:9/v1", &plugin_block("misbehave", ""))).unwrap();
    let failed = crate::support::json_prompt_command(dir.path(), None, "first try").output().await.unwrap();
    assert_eq!(failed.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&failed.stderr));
    let id = json_lines(&failed.stdout)[0]["session_id"].as_str().expect("the session's id").to_owned();

    std::fs::write(&config, config_text(&model.url(), &plugin_block("misbehave", ""))).unwrap();
    model.push(Reply::text("Answered."));
    let retried =
        crate::support::json_prompt_command(dir.path(), Some(&id), "second try").output().await.unwrap();
    assert!(retried.status.success(), "stderr: {}", String::from_utf8_lossy(&retried.stderr));
    let requests = model.requests();
    let messages = requests[0]["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert!(
        roles.windows(2).all(|pair| !(pair[0] == "user" && pair[1] == "user")),
        "two user messages in a row: {roles:?}"
    );
    let said: Vec<&str> = messages.iter().filter_map(|m| m["content"].as_str()).collect();
    for typed in ["first try", "second try"] {
        assert!(said.iter().any(|text| text.contains(typed)), "nothing typed is lost: {said:?}");
    }
}

#[test]
fn an_unknown_session_points_at_the_sessions_command_not_the_old_flag() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text("http://127.0.0.1:9/v1", "")).unwrap();
    let output = agent_host()
        .arg("--config")
        .arg(&config)
        .args(["--session", "no-such-id", "--prompt", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no session with id `no-such-id`"), "{stderr}");
    assert!(stderr.contains("`agent-host sessions`"), "{stderr}");
    assert!(!stderr.contains("--list-sessions"), "the deprecated spelling: {stderr}");
}

/// A folder whose config names no endpoint, so `agent-host` alone plays the offline demo
/// from `demo/script.toml` there.
fn demo_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("demo")).unwrap();
    std::fs::write(dir.path().join("demo/script.toml"), "[[turn]]\ntext = \"a scripted hello\"\n").unwrap();
    let config = format!(
        "[storage]\npath = \"s.db\"\n\n[runtime]\ncache_dir = \"{}\"\n\n{}",
        crate::support::shared_cache_dir().display(),
        plugin_block("todo", "")
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    dir
}

#[test]
fn only_a_run_that_plays_the_offline_demo_announces_it() {
    let dir = demo_folder();
    let run = |args: &[&str]| {
        let output = agent_host()
            .env_remove("AGENT_HOST_TEST_KEY")
            .arg("--config")
            .arg(dir.path().join("config.toml"))
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{args:?}: {stderr}");
        (String::from_utf8_lossy(&output.stdout).into_owned(), stderr)
    };
    for args in [&["sessions"][..], &["check", "--offline"], &["check"]] {
        let (stdout, stderr) = run(args);
        assert!(!stderr.contains("offline demo"), "{args:?} plays no demo, and says none: {stderr}");
        assert!(!stdout.contains("running the offline demo"), "{args:?}: {stdout}");
    }
    let (stdout, _) = run(&["check"]);
    assert!(stdout.contains("model: none configured"), "{stdout}");
    let (stdout, stderr) = run(&["--prompt", "hello"]);
    assert!(stderr.contains("running the offline demo"), "the run that plays it says so: {stderr}");
    assert!(stdout.contains("a scripted hello"), "{stdout}");
}

#[test]
fn log_lines_are_coloured_only_at_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text("http://127.0.0.1:9/v1", &plugin_block("todo", ""))).unwrap();
    // Piped, and NO_COLOR not set: nothing says colours would be read.
    let output = agent_host()
        .env_remove("NO_COLOR")
        .arg("--config")
        .arg(&config)
        .args(["-vv", "check", "--offline"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("DEBUG"), "-vv logs: {stderr}");
    assert!(!stderr.contains('\x1b'), "a log line kept its colours in a pipe: {stderr:?}");
}

#[tokio::test]
async fn a_plugin_commands_news_is_said_once() {
    let model = FakeModel::start().await;
    // The turn the goal queues, then its judge, who finds it done.
    model.push(Reply::text("on it"));
    model.push(Reply::text(r#"{"verdict": "done", "progress": true}"#));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let goal = plugin_block("goal", "[plugin.grants]\nmodel = true\nstart_turns = true\n");
    std::fs::write(&config, config_text(&model.url(), &goal)).unwrap();
    let stdout = crate::support::console_on(&config, None, "/goal ship it\n/goal clear\n").await;
    // The command answers, and the event it emitted says the same: once is enough.
    assert_eq!(stdout.matches("goal cleared").count(), 1, "{stdout}");
}

#[tokio::test]
async fn a_choices_command_alone_lists_the_values_it_takes() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text(&model.url(), &plugin_block("viewer", ""))).unwrap();
    let stdout = crate::support::console_on(&config, None, "/pick beta\n/pick\n").await;
    let listed = stdout.split("Pick: /pick VALUE switches it to one of\n").nth(1).unwrap_or_else(|| {
        panic!("`/pick` alone lists the choice's values:\n{stdout}");
    });
    let lines: Vec<&str> = listed.lines().take(2).collect();
    assert_eq!(lines, ["  ○ alpha", "  ● beta"], "{stdout}");
    // Given with a value, the command switches and lists nothing.
    assert_eq!(stdout.matches("switches it to one of").count(), 1, "{stdout}");
}
