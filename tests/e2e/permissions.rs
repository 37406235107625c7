//! The `permissions` plugin through the real host: rule precedence, globs, shell-command
//! reading (each trick of issue 17, first run through a real `sh` to show it does harm, is
//! in `shell_tricks`; path rules in `path_rules`), every preset on a mutating tool,
//! `/permissions`, the result cut, the audit log and fail-closed on a trapping policy.
//! Operator approvals answered during real turns are in `operator_answers`.

use agent_host::Event;
use agent_host::agent::SessionHandle;
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, plugin_block, writable_workspace};

mod gadgets;
mod operator_answers;
mod path_rules;
mod shell_tricks;

/// Allow by default, deny `rm` with the reason "no deleting".
const DENY_RM: &str = r#"default = "allow"
rules = [{ tool = "remember", args = { command = "rm *" }, decision = "deny", reason = "no deleting" }]"#;

/// Misbehave (tools `echo`, `remember`, mutating `touch`) plus permissions with `config`.
async fn host_with(model: &FakeModel, config: &str, misbehave_extra: &str) -> TestHost {
    let plugins = format!(
        "{}{}",
        plugin_block("misbehave", misbehave_extra),
        plugin_block("permissions", &format!("[plugin.config]\n{config}"))
    );
    TestHost::with_plugins(model, &plugins).await
}

async fn host(config: &str) -> TestHost {
    host_with(&FakeModel::start().await, config, "").await
}

async fn call(test: &TestHost, session: &SessionHandle, tool: &str, args: Value) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.expect("the call runs")
}

/// `remember` takes any extra arguments, so it stands in for a shell or file tool here.
async fn remember_with(test: &TestHost, extra: Value) -> ToolResult {
    let mut args = json!({"key": "k", "value": 1});
    args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    call(test, &test.session(), "remember", args).await
}

fn refused(result: &ToolResult) -> bool {
    !result.ok && result.output.contains("refused")
}

#[tokio::test]
async fn deny_beats_ask_beats_allow() {
    let test = host(
        r#"rules = [
  { tool = "echo", decision = "allow" },
  { tool = "echo", decision = "deny", reason = "echo is off limits" },
  { tool = "echo", decision = "ask" },
  { tool = "recall", decision = "allow" },
  { tool = "recall", decision = "ask", reason = "recall needs a look" },
]"#,
    )
    .await;
    let session = test.session();
    let echo = call(&test, &session, "echo", json!({"text": "hi"})).await;
    assert!(refused(&echo) && echo.output.contains("echo is off limits"), "{}", echo.output);
    // Ask wins over allow; with nobody to answer, agent.on_ask (deny) decides.
    let recall = call(&test, &session, "recall", json!({})).await;
    assert!(refused(&recall) && recall.output.contains("recall needs a look"), "{}", recall.output);
    assert!(recall.output.contains("nobody could answer"), "{}", recall.output);
}

#[tokio::test]
async fn tool_globs_plugin_rules_and_path_globs() {
    let test = host(
        r#"default = "deny"
rules = [
  { tool = "ec*", decision = "allow" },
  { tool = "plugin:misbeh*", decision = "deny", reason = "whole plugin" },
  { tool = "remember", args = { path = "src/*.rs" }, decision = "allow" },
]"#,
    )
    .await;
    let session = test.session();
    // `plugin:` matches every tool of the plugin, and deny beats the glob allow.
    let echo = call(&test, &session, "echo", json!({"text": "hi"})).await;
    assert!(refused(&echo) && echo.output.contains("whole plugin"), "{}", echo.output);

    let test = host(
        r#"default = "deny"
rules = [
  { tool = "ec*", decision = "allow" },
  { tool = "remember", args = { path = "src/*.rs" }, decision = "allow" },
]"#,
    )
    .await;
    let session = test.session();
    assert!(call(&test, &session, "echo", json!({"text": "hi"})).await.ok);
    assert!(remember_with(&test, json!({"path": "src/main.rs"})).await.ok);
    let outside = remember_with(&test, json!({"path": "docs/a.md"})).await;
    assert!(refused(&outside) && outside.output.contains("default decision"), "{}", outside.output);
    // A path rule never matches a call without a path.
    assert!(refused(&remember_with(&test, json!({})).await));
}

#[tokio::test]
async fn a_prefix_allow_does_not_stretch_over_chained_commands() {
    let test = host(
        r#"default = "deny"
rules = [
  { tool = "remember", args = { command = "git status" }, decision = "allow" },
  { tool = "remember", args = { command = "ls*" }, decision = "allow" },
  { tool = "remember", args = { command = "rm *" }, decision = "deny", reason = "no deleting" },
]"#,
    )
    .await;
    for ok in ["git status", "git status -s", "git status && ls -la", "ls | git status"] {
        let result = remember_with(&test, json!({"command": ok})).await;
        assert!(result.ok, "`{ok}` should run: {}", result.output);
    }
    for bad in
        ["git status && rm -rf /", "git statusx", "git status; curl x", "ls > /etc/passwd", "ls $(rm x)"]
    {
        let result = remember_with(&test, json!({"command": bad})).await;
        assert!(refused(&result), "`{bad}` should be refused: {}", result.output);
    }
    // A deny rule needs only one part.
    let result = remember_with(&test, json!({"command": "ls\nrm -rf build"})).await;
    assert!(result.output.contains("no deleting"), "{}", result.output);
}

#[tokio::test]
async fn deny_rules_see_through_quoting_renaming_and_wrappers() {
    let test = host(DENY_RM).await;
    for dodge in [
        "rm -rf build",
        "'rm' -rf build",
        "\"rm\" -rf build",
        "r''m -rf build",
        "\\rm -rf build",
        "/bin/rm -rf build",
        "command rm -rf build",
        "FOO=1 env rm -rf build",
        "sudo -u root rm -rf build",
        "ls; nohup nice -n 5 rm -rf build",
        "bash -c 'rm -rf build'",
        "sh -c \"echo hi && sh -c 'rm -rf build'\"",
        "eval 'rm -rf build'",
        "find . | xargs rm -rf",
    ] {
        let result = remember_with(&test, json!({ "command": dodge })).await;
        assert!(
            refused(&result) && result.output.contains("no deleting"),
            "`{dodge}` got through: {}",
            result.output
        );
    }
    for fine in ["ls -la", "echo rm -rf build", "git rm --cached x"] {
        let result = remember_with(&test, json!({ "command": fine })).await;
        assert!(result.ok, "`{fine}` should run: {}", result.output);
    }
}

#[tokio::test]
async fn each_preset_on_a_mutating_and_a_read_only_tool() {
    let cases = [
        ("read-only", false, "preset is read-only"),
        ("ask-to-mutate", false, "nobody could answer"),
        ("accept-edits", false, "nobody could answer"),
        ("trust", true, ""),
    ];
    for (preset, touch_runs, why) in cases {
        let test = host(&format!("preset = \"{preset}\"")).await;
        let session = test.session();
        let echo = call(&test, &session, "echo", json!({"text": "hi"})).await;
        assert!(echo.ok, "{preset}: echo is read-only and runs: {}", echo.output);
        let touch = call(&test, &session, "touch", json!({})).await;
        assert_eq!(touch.ok, touch_runs, "{preset}: {}", touch.output);
        assert!(touch.output.contains(why), "{preset}: {}", touch.output);
    }
}

#[tokio::test]
async fn the_permissions_command_switches_the_session_preset() {
    let test = host("preset = \"read-only\"").await;
    let session = test.session();
    assert!(!call(&test, &session, "touch", json!({})).await.ok);
    let mut locked = session.lock().await;
    let shown = test.host.command(&mut locked, "/permissions", &*test.events).await.unwrap();
    assert!(shown.contains("read-only (from config)"), "{shown}");
    let bad = test.host.command(&mut locked, "/permissions yolo", &*test.events).await;
    assert!(format!("{bad:?}").contains("unknown preset `yolo`"), "{bad:?}");
    let switched = test.host.command(&mut locked, "/permissions trust", &*test.events).await.unwrap();
    assert!(switched.contains("trust"), "{switched}");
    assert_eq!(locked.bag().get_json("permissions", "preset"), Some(json!("trust")));
    drop(locked);
    let touch = call(&test, &session, "touch", json!({})).await;
    assert!(touch.ok, "{}", touch.output);
    // A fresh session starts from the config again.
    assert!(!call(&test, &test.session(), "touch", json!({})).await.ok);
}

#[tokio::test]
async fn large_results_are_cut_with_a_note() {
    let test = host("max_result_bytes = 10").await;
    let result = call(&test, &test.session(), "echo", json!({"text": "a".repeat(100)})).await;
    assert!(result.ok);
    assert!(result.output.starts_with(&format!("{}\n", "a".repeat(10))), "{}", result.output);
    assert!(result.output.contains("cut to 10 of 100 bytes; 90 bytes removed"), "{}", result.output);
    let small = call(&test, &test.session(), "echo", json!({"text": "short"})).await;
    assert_eq!(small.output, "short");
}

#[tokio::test]
async fn the_audit_log_gets_a_line_when_a_call_is_decided_and_one_when_it_ends() {
    let audit = tempfile::tempdir().unwrap();
    let config =
        format!("preset = \"read-only\"\naudit = true\n{}", crate::support::audit_grant(audit.path()));
    let test = host(&config).await;
    let session = test.session();
    call(&test, &session, "echo", json!({"text": "hi"})).await;
    call(&test, &session, "touch", json!({})).await;
    let text = std::fs::read_to_string(audit.path().join("audit.jsonl")).expect("the audit file");
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("JSON lines")).collect();
    assert_eq!(lines.len(), 4, "{text}");
    let phases: Vec<(&str, &str)> =
        lines.iter().map(|l| (l["tool"].as_str().unwrap(), l["phase"].as_str().unwrap())).collect();
    assert_eq!(
        phases,
        [("echo", "decided"), ("echo", "finished"), ("touch", "decided"), ("touch", "finished")]
    );
    assert_eq!(lines[0]["arguments"], json!({"text": "hi"}));
    assert_eq!(lines[0]["decision"], "allow");
    assert_eq!(lines[1]["ok"], true);
    assert_eq!(lines[1]["output_bytes"], 2);
    assert_eq!(lines[2]["decision"], "deny");
    assert!(lines[2]["reason"].as_str().unwrap().contains("read-only"), "{}", lines[2]);
    assert_eq!(lines[3]["mutates"], true);
    assert_eq!(lines[3]["ok"], false, "the refused call is audited too");
    assert_eq!(lines[3]["plugin"], "misbehave");
    assert_eq!(lines[0]["call_id"], lines[1]["call_id"]);
}

/// The real binary runs a tool that never returns; the audit file already holds the call's
/// decision while it runs, and still does after the host is killed in the middle of it.
#[tokio::test]
async fn a_call_that_never_ends_is_on_record_before_it_runs() {
    let audit = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = FakeModel::start().await;
    model.push(Reply::tool("spin", "{}"));
    let plugins = format!(
        "{}{}",
        plugin_block("misbehave", ""),
        plugin_block(
            "permissions",
            &format!(
                "[plugin.config]\npreset = \"trust\"\naudit = true\n{}",
                crate::support::audit_grant(audit.path())
            )
        )
    );
    std::fs::write(dir.path().join("config.toml"), crate::support::config_text(&model.url(), &plugins))
        .unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .env("NO_COLOR", "1")
        .current_dir(dir.path())
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .args(["--json", "--prompt", "spin"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let log = audit.path().join("audit.jsonl");
    let mut decided = None;
    for _ in 0..1200 {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.contains("\"spin\"")) {
            decided = Some((text.clone(), serde_json::from_str::<Value>(line).unwrap()));
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    child.kill().await.expect("the host is killed");
    let (text, line) = decided.expect("the spin call was recorded while it ran");
    assert_eq!(line["phase"], "decided", "{text}");
    assert_eq!(line["decision"], "allow", "{text}");
    let after = std::fs::read_to_string(&log).unwrap();
    assert!(
        !after.lines().any(|l| l.contains("\"spin\"") && l.contains("\"finished\"")),
        "the call never finished: {after}"
    );
}

#[tokio::test]
async fn a_trapping_policy_fails_closed() {
    let test = host_with(
        &FakeModel::start().await,
        "preset = \"trust\"",
        "[plugin.config]\ntrap_in_pre_tool_use = true",
    )
    .await;
    let result = call(&test, &test.session(), "echo", json!({"text": "hi"})).await;
    assert!(!result.ok && result.output.contains("policy plugin failed"), "{}", result.output);
}

#[tokio::test]
async fn accept_edits_allows_the_fs_edit_tools_and_read_only_refuses_them() {
    let workspace = tempfile::tempdir().unwrap();
    let grant = writable_workspace(workspace.path());
    for (preset, writes) in [("accept-edits", true), ("read-only", false)] {
        let model = FakeModel::start().await;
        let plugins = format!(
            "{}{}",
            plugin_block("fs", &grant),
            plugin_block("permissions", &format!("[plugin.config]\npreset = \"{preset}\""))
        );
        let test = TestHost::with_plugins(&model, &plugins).await;
        let session = test.session();
        let write = call(&test, &session, "write_file", json!({"path": "a.txt", "content": preset})).await;
        assert_eq!(write.ok, writes, "{preset}: {}", write.output);
        let read = call(&test, &session, "list_dir", json!({})).await;
        assert!(read.ok, "{preset}: reading is always allowed: {}", read.output);
    }
    assert_eq!(std::fs::read_to_string(workspace.path().join("a.txt")).unwrap(), "accept-edits");
}

#[tokio::test]
async fn trust_mode_puts_a_loud_banner_in_the_instructions() {
    for (preset, loud) in [("trust", true), ("ask-to-mutate", false)] {
        let model = FakeModel::start().await;
        let test = host_with(&model, &format!("preset = \"{preset}\""), "").await;
        model.push(Reply::text("ok"));
        test.turn(&test.session(), "hello").await.unwrap();
        let system = model.requests()[0]["messages"][0]["content"].as_str().unwrap().to_owned();
        assert_eq!(system.contains("TRUST MODE"), loud, "{preset}: {system}");
        assert!(system.contains("preset") || loud, "{system}");
    }
}

#[tokio::test]
async fn bad_config_is_refused_naming_the_field() {
    let model = FakeModel::start().await;
    for (config, expected) in [
        ("preset = \"yolo\"", "preset"),
        ("default = \"maybe\"", "default"),
        (
            "rules = [{ tool = \"x\", decision = \"perhaps\" }]",
            "rules[0].decision`: unknown variant `perhaps`",
        ),
        ("max_result_bytes = 0", "max_result_bytes"),
    ] {
        let plugins = plugin_block("permissions", &format!("[plugin.config]\n{config}"));
        let error =
            TestHost::new(&crate::support::config_text(&model.url(), &plugins)).await.err().expect("refused");
        let text = format!("{error:#}");
        assert!(text.contains(expected), "{config}: {text}");
    }
}

/// agent-mode and permissions both gate a mutating call: in plan mode agent-mode's deny wins
/// over the permissions plugin's ask (nobody is asked); in execute the permissions preset
/// decides; with `trust` the call runs.
#[tokio::test]
async fn plan_mode_and_permissions_agree_on_a_mutating_call() {
    let model = FakeModel::start().await;
    let plugins = format!(
        "{}{}{}",
        plugin_block("misbehave", ""),
        plugin_block("agent-mode", ""),
        plugin_block("permissions", "[plugin.config]\npreset = \"ask-to-mutate\"\n")
    );
    let test = TestHost::with_plugins(&model, &plugins).await;
    let session = test.session();

    let in_plan = call(&test, &session, "touch", json!({})).await;
    assert!(refused(&in_plan) && in_plan.output.contains("agent-mode@"), "{}", in_plan.output);
    assert!(
        !test.take_events().iter().any(|e| matches!(e, Event::ApprovalRequested { .. })),
        "a deny means nobody is asked"
    );
    assert!(
        call(&test, &session, "echo", json!({"text": "read-only"})).await.ok,
        "read-only tools pass in plan"
    );

    test.host.command(&mut *session.lock().await, "/mode execute", &*test.events).await.unwrap();
    let in_execute = call(&test, &session, "touch", json!({})).await;
    assert!(refused(&in_execute) && in_execute.output.contains("permissions@"), "{}", in_execute.output);

    test.host.command(&mut *session.lock().await, "/permissions trust", &*test.events).await.unwrap();
    let trusted = call(&test, &session, "touch", json!({})).await;
    assert!(trusted.ok && trusted.output == "touched", "{}", trusted.output);
}
