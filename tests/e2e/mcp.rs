//! MCP servers nobody on this project wrote — the reference `server-everything` (over stdio
//! and streamable HTTP), `server-filesystem` and `mcp-server-time` — behind the same path as
//! every other tool: offered to the model with their schemas, validated, through the hooks,
//! permission rules, plan mode and approvals, cut to the result cap; started, restarted,
//! reloaded and stopped by the host.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use agent_host::agent::{ApprovalAnswer, SessionHandle};
use agent_host::mcp::ServerState;
use agent_host::tools::ToolResult;
use agent_host::{Event, Host};
use serde_json::{Value, json};

use crate::support::mcp::{everything_block, mcp_servers, mcp_stdio_block};
use crate::support::{FakeModel, Reply, ScriptedApprover, TestHost, config_text, plugin_block};

async fn call(test: &TestHost, session: &SessionHandle, tool: &str, args: Value) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.unwrap()
}

async fn host(blocks: &str) -> TestHost {
    TestHost::with_plugins(&FakeModel::start().await, blocks).await
}

/// Waits until `done` holds of the host, for at most `limit`.
async fn until(host: &Host, limit: Duration, done: impl Fn(&Host) -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done(host) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done(host)
}

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z ")
}

#[tokio::test]
async fn a_stdio_servers_tools_reach_the_model_and_a_call_runs_through_the_loop() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("mcp__everything__get-sum", r#"{"a": 2, "b": 40}"#));
    model.push(Reply::text("the sum is 42"));
    let test = TestHost::with_plugins(&model, &everything_block("everything", "")).await;
    let session = test.session();
    let outcome = test.turn(&session, "add 2 and 40").await.unwrap();
    assert_eq!(outcome.reply, "the sum is 42");

    let requests = model.requests();
    let tools = requests[0]["tools"].as_array().expect("tools are offered");
    let sum = tools
        .iter()
        .find(|tool| tool["function"]["name"] == "mcp__everything__get-sum")
        .expect("get-sum offered");
    assert!(sum["function"]["description"].as_str().unwrap().to_lowercase().contains("sum"), "{sum}");
    assert_eq!(
        sum["function"]["parameters"]["properties"]["a"]["type"], "number",
        "the server's own schema: {sum}"
    );
    let result =
        requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap().clone();
    assert!(result["content"].as_str().unwrap().contains("42"), "{result}");
    let events = test.take_events();
    assert!(
        events.iter().any(|e| matches!(e, Event::ToolCall { name, plugin, .. }
            if name == "mcp__everything__get-sum" && plugin == "mcp:everything")),
        "the call names its server: {events:?}"
    );
    let status = &test.host.mcp().statuses()[0];
    assert_eq!((status.state, status.calls), (ServerState::Ready, 1));
    assert!(status.startup.is_some() && status.pid.is_some());
}

#[tokio::test]
async fn arguments_that_miss_the_servers_schema_go_back_to_the_model_uncalled() {
    let test = host(&everything_block("everything", "")).await;
    let session = test.session();
    let result = call(&test, &session, "mcp__everything__get-sum", json!({"a": "two"})).await;
    assert!(!result.ok && result.output.contains("do not match its schema"), "{}", result.output);
    assert_eq!(test.host.mcp().statuses()[0].calls, 0, "the server was not called");
}

#[tokio::test]
async fn a_tool_over_streamable_http_is_listed_and_called() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = tokio::process::Command::new("node")
        .arg(&mcp_servers().everything)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts server-everything");
    let listening = async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), listening).await.expect("server-everything listens");
    let block = format!("[[mcp]]\nname = \"remote\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n");
    let test = host(&block).await;
    let status = &test.host.mcp().statuses()[0];
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    assert!(status.tools.contains(&"mcp__remote__echo".to_owned()), "{:?}", status.tools);
    let session = test.session();
    let echoed = call(&test, &session, "mcp__remote__echo", json!({"message": "over http"})).await;
    assert!(echoed.ok && echoed.output.contains("over http"), "{echoed:?}");
    server.kill().await.unwrap();
}

#[tokio::test]
async fn a_python_server_over_stdio_answers() {
    let time = mcp_servers().time.display().to_string();
    let test = host(&mcp_stdio_block("time", &time, &["--local-timezone", "UTC"], "")).await;
    let session = test.session();
    let now = call(&test, &session, "mcp__time__get_current_time", json!({"timezone": "Europe/Paris"})).await;
    assert!(now.ok, "{now:?}");
    let answer: Value = serde_json::from_str(&now.output).expect("structured content as JSON");
    assert_eq!(answer["timezone"], "Europe/Paris", "{answer}");
}

/// server-filesystem over `dir`, beside agent-mode and permissions.
fn filesystem_deployment(dir: &std::path::Path, preset: &str, rules: &str) -> String {
    let script = mcp_servers().filesystem.display().to_string();
    format!(
        "{}{}{}",
        plugin_block("agent-mode", ""),
        plugin_block("permissions", &format!("[plugin.config]\npreset = \"{preset}\"\nrules = [{rules}]")),
        mcp_stdio_block("files", "node", &[&script, &dir.display().to_string()], "")
    )
}

#[tokio::test]
async fn plan_mode_refuses_a_tool_the_server_does_not_mark_read_only_and_lets_a_read_through() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "kept").unwrap();
    let test = host(&filesystem_deployment(dir.path(), "trust", "")).await;
    let session = test.session();
    let path = dir.path().join("new.txt").display().to_string();
    let write = call(&test, &session, "mcp__files__write_file", json!({"path": path, "content": "x"})).await;
    assert!(!write.ok && write.output.contains("`plan`"), "{write:?}");
    assert!(!dir.path().join("new.txt").exists());
    let notes = dir.path().join("notes.txt").display().to_string();
    let read = call(&test, &session, "mcp__files__read_text_file", json!({"path": notes})).await;
    assert!(read.ok && read.output.contains("kept"), "read-only tools pass in plan: {read:?}");

    let mut live = session.lock().await;
    test.host.command(&mut live, "/mode execute", &*test.events).await.unwrap();
    drop(live);
    let write = call(&test, &session, "mcp__files__write_file", json!({"path": path, "content": "x"})).await;
    assert!(write.ok, "{write:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("new.txt")).unwrap(), "x");
}

#[tokio::test]
async fn ask_to_mutate_asks_the_operator_about_a_writing_tool_showing_its_server() {
    let dir = tempfile::tempdir().unwrap();
    let model = FakeModel::start().await;
    let path = dir.path().join("asked.txt").display().to_string();
    let arguments = json!({"path": path, "content": "approved"}).to_string();
    model.push(Reply::tool("mcp__files__write_file", &arguments));
    model.push(Reply::text("written"));
    let blocks = filesystem_deployment(dir.path(), "ask-to-mutate", "").replace(
        &plugin_block("agent-mode", ""),
        &plugin_block("agent-mode", "[plugin.config]\ndefault_mode = \"execute\""),
    );
    let test = TestHost::with_plugins(&model, &blocks).await;
    let session = test.session();
    let approver = ScriptedApprover::new([ApprovalAnswer::AllowOnce]);
    let mut live = session.lock().await;
    test.host.run_turn(&mut live, "write it", &*test.events, &approver).await.unwrap();
    assert_eq!(approver.asked_tools(), ["mcp__files__write_file"]);
    assert_eq!(std::fs::read_to_string(dir.path().join("asked.txt")).unwrap(), "approved");
    let events = test.take_events();
    assert!(
        events.iter().any(|e| matches!(e, Event::ApprovalRequested { plugin, .. } if plugin == "mcp:files")),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_permission_rule_names_a_server_or_its_tools() {
    let rules = r#"{ tool = "mcp:everything", decision = "deny", reason = "not that server" },
                   { tool = "mcp__other__get-*", decision = "deny", reason = "no getters" }"#;
    let blocks = format!(
        "{}{}{}",
        plugin_block("permissions", &format!("[plugin.config]\npreset = \"trust\"\nrules = [{rules}]")),
        everything_block("everything", ""),
        everything_block("other", "")
    );
    let test = host(&blocks).await;
    let session = test.session();
    let denied = call(&test, &session, "mcp__everything__echo", json!({"message": "x"})).await;
    assert!(!denied.ok && denied.output.contains("not that server"), "{denied:?}");
    let denied = call(&test, &session, "mcp__other__get-sum", json!({"a": 1, "b": 2})).await;
    assert!(!denied.ok && denied.output.contains("no getters"), "{denied:?}");
    let allowed = call(&test, &session, "mcp__other__echo", json!({"message": "fine"})).await;
    assert!(allowed.ok && allowed.output.contains("fine"), "{allowed:?}");
}

#[tokio::test]
async fn a_server_that_is_not_installed_or_exits_at_start_is_skipped_and_says_why() {
    let blocks = format!(
        "{}{}{}{}",
        mcp_stdio_block("missing", "agent-host-no-such-mcp-server", &[], ""),
        mcp_stdio_block("quits", "sh", &["-c", "echo 'no config for you' >&2; exit 3"], ""),
        everything_block("everything", ""),
        everything_block("unset", "env = [\"AGENT_HOST_NO_SUCH_VARIABLE\"]")
    );
    let test = host(&blocks).await;
    let statuses = test.host.mcp().statuses();
    let missing = &statuses[0];
    assert_eq!(missing.state, ServerState::Failed);
    assert!(missing.last_error.as_deref().unwrap().contains("not installed, or not on PATH"), "{missing:?}");
    let quits = &statuses[1];
    assert_eq!(quits.state, ServerState::Failed);
    let error = quits.last_error.as_deref().unwrap();
    assert!(error.contains("exit status: 3") && error.contains("no config for you"), "{error}");
    assert_eq!(statuses[2].state, ServerState::Ready, "the others serve");
    let unset = statuses[3].last_error.as_deref().unwrap();
    assert!(unset.contains("needs the host variable `AGENT_HOST_NO_SUCH_VARIABLE`"), "{unset}");
    let table = test.host.mcp_table();
    assert!(table.contains("missing") && table.contains("failed"), "{table}");

    let session = test.session();
    let absent = call(&test, &session, "mcp__quits__anything", json!({})).await;
    assert!(!absent.ok && absent.output.contains("there is no tool named"), "{absent:?}");
}

#[tokio::test]
async fn check_refuses_a_deployment_whose_server_does_not_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_text("http://127.0.0.1:9/v1", &mcp_stdio_block("quits", "sh", &["-c", "exit 3"], ""));
    let output = check_offline(dir.path(), &config);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let line = config.lines().position(|line| line == "name = \"quits\"").unwrap() + 1;
    assert!(
        stderr.contains(&format!("config.toml, line {line}: mcp[0]: MCP server `quits` did not start")),
        "{stderr}"
    );
    assert!(stderr.contains("exit status: 3"), "{stderr}");
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_fails_that_call_clearly_and_is_restarted() {
    let test = host(&everything_block("everything", "")).await;
    let session = test.session();
    let pid = test.host.mcp().statuses()[0].pid.expect("a started server has a pid");
    let long = call(
        &test,
        &session,
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 20, "steps": 4}),
    );
    let kill = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    };
    let (result, ()) = tokio::join!(long, kill);
    assert!(!result.ok && result.output.contains("stopped during the call"), "{result:?}");
    // The call can fail before the supervisor has seen the exit: wait for the restart itself.
    let restarted = |host: &Host| {
        let status = &host.mcp().statuses()[0];
        status.restarts >= 1 && status.state == ServerState::Ready
    };
    assert!(
        until(&test.host, Duration::from_secs(30), restarted).await,
        "restarted: {}",
        test.host.mcp_table()
    );
    let status = &test.host.mcp().statuses()[0];
    assert_eq!(status.restarts, 1);
    assert_ne!(status.pid, Some(pid));
    assert!(status.last_error.as_deref().unwrap().contains("signal: 9"), "{status:?}");
    let echoed = call(&test, &session, "mcp__everything__echo", json!({"message": "back"})).await;
    assert!(echoed.ok && echoed.output.contains("back"), "{echoed:?}");
}

#[tokio::test]
async fn a_call_past_the_deadline_is_cancelled_and_the_server_serves_on() {
    let test = host(&everything_block("everything", "timeout_ms = 400")).await;
    let session = test.session();
    let started = Instant::now();
    let slow = call(
        &test,
        &session,
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 30, "steps": 3}),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(20), "the deadline held");
    assert!(!slow.ok && slow.output.contains("did not answer") && slow.output.contains("400 ms"), "{slow:?}");
    let echoed = call(&test, &session, "mcp__everything__echo", json!({"message": "still here"})).await;
    assert!(echoed.ok, "{echoed:?}");
}

#[tokio::test]
async fn a_reload_adds_and_removes_servers_while_a_session_runs() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &everything_block("first", "")).await;
    let session = test.session();
    assert!(call(&test, &session, "mcp__first__echo", json!({"message": "1"})).await.ok);
    let first_pid = test.host.mcp().statuses()[0].pid.unwrap();

    let config = test.dir.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("name = \"first\"", "name = \"second\"")).unwrap();
    test.host.reload(&*test.events).await.unwrap();
    let names: Vec<String> = test.host.mcp().statuses().into_iter().map(|status| status.name).collect();
    assert_eq!(names, ["second"]);
    assert!(
        test.take_events()
            .iter()
            .any(|e| matches!(e, Event::McpServerStarted { server, .. } if server == "second")),
        "the new server is announced"
    );
    assert!(
        until(&test.host, Duration::from_secs(10), |_| !alive(first_pid)).await,
        "the removed server's process is gone"
    );
    let gone = call(&test, &session, "mcp__first__echo", json!({"message": "1"})).await;
    assert!(!gone.ok && gone.output.contains("there is no tool named"), "{gone:?}");
    let added = call(&test, &session, "mcp__second__echo", json!({"message": "2"})).await;
    assert!(added.ok && added.output.contains('2'), "{added:?}");

    // An unchanged entry keeps its process across a reload.
    let second_pid = test.host.mcp().statuses()[0].pid.unwrap();
    test.host.reload(&*test.events).await.unwrap();
    assert_eq!(test.host.mcp().statuses()[0].pid, Some(second_pid));
    model.push(Reply::text("still talking"));
    assert_eq!(test.turn(&session, "hello").await.unwrap().reply, "still talking");
}

#[tokio::test]
async fn a_changed_tool_list_is_listed_again_and_the_next_model_call_offers_it() {
    // server-everything says its tools changed (notifications/tools/list_changed) once the
    // session is initialized, when it registers the tools that depend on the client; the
    // host's first listing may come before or after that, so the second is what is checked.
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &everything_block("everything", "")).await;
    assert!(
        until(&test.host, Duration::from_secs(10), |host| host.mcp().statuses()[0].listings >= 2).await,
        "the notification was acted on: {}",
        test.host.mcp_table()
    );
    let listed = test.host.mcp().statuses()[0].tools.clone();
    assert!(listed.iter().any(|name| name == "mcp__everything__simulate-research-query"), "{listed:?}");
    model.push(Reply::text("ok"));
    let session = test.session();
    test.turn(&session, "what can you do").await.unwrap();
    let offered: Vec<String> = model.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(offered, listed, "the model is offered the list as it stands");
}

#[tokio::test]
async fn a_result_over_the_cap_is_cut_and_says_so() {
    let blocks = format!("[runtime.limits]\nmax_output_kb = 1\n\n{}", everything_block("everything", ""));
    let test = host(&blocks).await;
    let session = test.session();
    let long = "x".repeat(5000);
    let echoed = call(&test, &session, "mcp__everything__echo", json!({"message": long})).await;
    assert!(echoed.ok);
    assert!(
        echoed.output.len() < 1200 && echoed.output.contains("[output cut: 1024 of"),
        "{}",
        echoed.output
    );
}

#[tokio::test]
async fn only_the_listed_variables_reach_a_started_server() {
    // cargo sets CARGO_MANIFEST_DIR and CARGO_PKG_NAME for the test process: one is listed.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some(), "the control: the host has it");
    let test = host(&everything_block("everything", "env = [\"CARGO_MANIFEST_DIR\"]")).await;
    let session = test.session();
    let env = call(&test, &session, "mcp__everything__get-env", json!({})).await;
    assert!(env.ok, "{env:?}");
    let seen: Value = serde_json::from_str(&env.output).expect("get-env answers JSON");
    let seen = seen.as_object().unwrap();
    assert_eq!(seen["CARGO_MANIFEST_DIR"], env!("CARGO_MANIFEST_DIR"));
    assert!(seen.contains_key("PATH"), "the basics reach it: {seen:?}");
    let allowed: Vec<&str> =
        ["CARGO_MANIFEST_DIR"].into_iter().chain(agent_host::config::BASELINE_ENV.iter().copied()).collect();
    let strays: Vec<&String> = seen
        .keys()
        .filter(|name| !allowed.contains(&name.as_str()) && std::env::var_os(name).is_some())
        .collect();
    assert!(strays.is_empty(), "host variables that were not listed reached the server: {strays:?}");
}

#[tokio::test]
async fn a_secret_passed_through_env_appears_in_no_output_of_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let model = FakeModel::start().await;
    model.push(Reply::tool("mcp__everything__get-sum", r#"{"a": 1, "b": 2}"#));
    model.push(Reply::text("three"));
    let blocks = format!(
        "{}{}",
        everything_block("everything", "env = [\"MCP_SERVER_SECRET\"]"),
        mcp_stdio_block("broken", "sh", &["-c", "exit 1"], "env = [\"MCP_SERVER_SECRET\"]")
    );
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), &blocks)).unwrap();
    let secret = "mcp-secret-3f9a1c77";
    let output = crate::support::json_prompt_command(dir.path(), None, "add")
        .env("AGENT_HOST_TEST_KEY", "k")
        .env("MCP_SERVER_SECRET", secret)
        .env("RUST_LOG", "debug")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.contains("\"type\":\"mcp_server_started\"")
            && stdout.contains("\"type\":\"mcp_server_failed\""),
        "{stdout}"
    );
    assert!(stdout.contains("\"plugin\":\"mcp:everything\""), "the call names its server: {stdout}");
    assert!(!stdout.contains(secret) && !stderr.contains(secret), "the secret leaked");
    assert!(!config_text(&model.url(), &blocks).contains(secret), "the control: the file never held it");
}

#[tokio::test]
async fn a_call_in_flight_finishes_on_the_server_a_reload_replaced_which_then_stops() {
    let test = host(&everything_block("everything", "")).await;
    let session = test.session();
    let old_pid = test.host.mcp().statuses()[0].pid.unwrap();
    let long = call(
        &test,
        &session,
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 2, "steps": 2}),
    );
    let replace = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let config = test.dir.path().join("config.toml");
        let text = std::fs::read_to_string(&config).unwrap();
        // Same server, another entry: a changed entry is a new server.
        std::fs::write(
            &config,
            text.replace("name = \"everything\"", "name = \"everything\"\ntimeout_ms = 59000"),
        )
        .unwrap();
        test.host.reload(&*test.events).await.unwrap();
        assert_ne!(test.host.mcp().statuses()[0].pid, Some(old_pid), "a new process serves new calls");
        assert!(alive(old_pid), "the old one still serves the call in flight");
    };
    let (result, ()) = tokio::join!(long, replace);
    assert!(result.ok && result.output.contains("Long running operation completed"), "{result:?}");
    assert!(
        until(&test.host, Duration::from_secs(10), |_| !alive(old_pid)).await,
        "the replaced server stopped"
    );
}

#[tokio::test]
async fn a_turn_dropped_mid_call_leaves_the_server_serving() {
    let model = FakeModel::start().await;
    model.push(Reply::tool(
        "mcp__everything__trigger-long-running-operation",
        r#"{"duration": 30, "steps": 3}"#,
    ));
    let test = TestHost::with_plugins(&model, &everything_block("everything", "")).await;
    let session = test.session();
    // What Ctrl-C does to a turn: its future is dropped, and with it the call, which tells
    // the server (notifications/cancelled).
    let cut = tokio::time::timeout(Duration::from_millis(800), test.turn(&session, "take your time")).await;
    assert!(cut.is_err(), "the turn was still waiting on the server");
    let echoed = call(&test, &session, "mcp__everything__echo", json!({"message": "after"})).await;
    assert!(echoed.ok && echoed.output.contains("after"), "{echoed:?}");
    assert_eq!(test.host.mcp().statuses()[0].state, ServerState::Ready);
}

#[tokio::test]
async fn the_hosts_exit_stops_a_started_server_and_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let model = FakeModel::start().await;
    model.push(Reply::text("bye"));
    let pids = dir.path().join("pids");
    let script = mcp_servers().everything.display().to_string();
    // The server's shell records its own pid and that of a child it leaves running, then
    // becomes server-everything.
    let command =
        format!("sleep 300 & echo $! >> '{0}'; echo $$ >> '{0}'; exec node '{script}' stdio", pids.display());
    let blocks = mcp_stdio_block("everything", "sh", &["-c", &command], "");
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), &blocks)).unwrap();
    let output = crate::support::json_prompt_command(dir.path(), None, "hello")
        .env("AGENT_HOST_TEST_KEY", "k")
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let started: Vec<u32> =
        std::fs::read_to_string(&pids).unwrap().lines().map(|pid| pid.trim().parse().unwrap()).collect();
    assert_eq!(started.len(), 2, "the server and its child");
    let gone = async {
        while started.iter().any(|&pid| alive(pid)) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    assert!(
        tokio::time::timeout(Duration::from_secs(5), gone).await.is_ok(),
        "still running after the host exited: {started:?}"
    );
}

#[tokio::test]
async fn a_servers_stderr_reaches_the_terminal_escaped() {
    let dir = tempfile::tempdir().unwrap();
    // A window title (OSC), a screen clear (CSI) and a carriage return, then an exit.
    let script = r"printf '\033]0;owned\007\033[2J\rno config\n' >&2; exit 3";
    let config = config_text("http://127.0.0.1:9/v1", &mcp_stdio_block("noisy", "sh", &["-c", script], ""));
    let output = check_offline(dir.path(), &config);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no config"), "the server's words are shown: {stderr}");
    assert!(!stderr.contains(['\u{1b}', '\u{7}', '\r']), "raw control characters: {stderr:?}");
    assert!(stderr.contains(r"\x1b]0;owned\x07"), "shown as what they are: {stderr}");
}

/// A stdio MCP server in a few lines of Python whose one tool, `big`, answers with a message
/// of `bytes` bytes.
fn big_answer_server(bytes: usize) -> String {
    format!(
        r#"
import json, sys
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    method, id = request.get("method"), request.get("id")
    if method == "initialize":
        send({{"jsonrpc": "2.0", "id": id, "result": {{"protocolVersion": request["params"]["protocolVersion"],
              "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "big", "version": "1"}}}}}})
    elif method == "tools/list":
        send({{"jsonrpc": "2.0", "id": id, "result": {{"tools": [{{"name": "big", "description": "a big answer",
              "inputSchema": {{"type": "object"}}}}, {{"name": "small", "description": "a small answer",
              "inputSchema": {{"type": "object"}}}}]}}}})
    elif method == "tools/call":
        size = {bytes} if request["params"]["name"] == "big" else 5
        send({{"jsonrpc": "2.0", "id": id, "result": {{"content": [{{"type": "text", "text": "x" * size}}]}}}})
"#
    )
}

#[tokio::test]
async fn an_answer_over_the_message_cap_fails_the_call_at_once_and_the_server_restarts() {
    let script = big_answer_server(17 * 1024 * 1024);
    // A deadline far beyond the test's patience: only failing at once passes.
    let test = host(&mcp_stdio_block("big", "python3", &["-c", &script], "timeout_ms = 120000")).await;
    let session = test.session();
    let result = call(&test, &session, "mcp__big__big", json!({})).await;
    let shown = &result.output[..result.output.len().min(300)];
    assert!(!result.ok, "{shown}");
    assert!(shown.contains("answered `big` with a message over 16 MiB"), "{shown}");
    // The call can fail before the supervisor has seen the connection close: wait for the
    // restart itself.
    let restarted = |host: &Host| {
        let status = &host.mcp().statuses()[0];
        status.restarts >= 1 && status.state == ServerState::Ready
    };
    assert!(until(&test.host, Duration::from_secs(30), restarted).await, "{}", test.host.mcp_table());
    let small = call(&test, &session, "mcp__big__small", json!({})).await;
    assert!(small.ok && small.output.contains("xxxxx"), "{small:?}");
}

#[tokio::test]
async fn check_refuses_a_server_handed_the_deployment_folder_naming_the_argument() {
    let dir = tempfile::tempdir().unwrap();
    let script = mcp_servers().filesystem.display().to_string();
    let config = config_text("http://127.0.0.1:9/v1", &mcp_stdio_block("files", "node", &[&script, "."], ""));
    let output = check_offline(dir.path(), &config);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("mcp[0].args[1]") && stderr.contains("server `files` may not be handed `.`"),
        "{stderr}"
    );
    assert!(stderr.contains("the config file"), "says what it would hand over: {stderr}");
}

/// The binary's `--check --offline` on `config`, written to `dir/config.toml`.
fn check_offline(dir: &std::path::Path, config: &str) -> std::process::Output {
    std::fs::write(dir.join("config.toml"), config).unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env("AGENT_HOST_TEST_KEY", "k")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(["check", "--offline"])
        .output()
        .unwrap()
}
