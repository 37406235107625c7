//! The committed event schema (`docs/events.schema.json`) against the real binary's
//! `--json` output: every line of a run that produces most event types validates, and the
//! run does produce them. The events' true `iterations` for each way a turn ends is in
//! `turn_iterations`.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{FakeModel, Reply, config_text, json_prompt_command, plugin_block, repo_root};

mod turn_iterations;

/// Misbehave's `remember` allowed, `echo` refused, `touch` asked about with nobody to answer.
const RULES: &str = r#"[plugin.config]
default = "allow"
rules = [
  { tool = "echo", decision = "deny", reason = "echo is off limits" },
  { tool = "touch", decision = "ask", reason = "touching needs a look" },
]"#;

/// The committed schema, compiled.
pub fn committed_validator() -> jsonschema::Validator {
    let path = repo_root().join("docs/events.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).expect("the committed schema is JSON");
    jsonschema::validator_for(&schema).expect("the committed schema is a valid JSON Schema")
}

/// Every stdout line of a `--json` run, parsed, each checked against the committed schema.
pub fn validated_lines(stdout: &str) -> Vec<Value> {
    let validator = committed_validator();
    stdout
        .lines()
        .map(|line| {
            let event: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            let errors: Vec<String> = validator.iter_errors(&event).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{line}\ndoes not match docs/events.schema.json: {errors:#?}");
            event
        })
        .collect()
}

#[tokio::test]
async fn every_line_of_a_real_json_run_matches_the_committed_schema() {
    let model = FakeModel::start().await;
    let first = Reply::text("Remembering.").and_tool("remember", r#"{"key":"colour","value":"teal"}"#);
    model.push(first.and_tool("echo", r#"{"text":"hi"}"#));
    model.push(Reply::tool("touch", "{}"));
    let dir = tempfile::tempdir().unwrap();
    let plugins = format!("{}{}", plugin_block("misbehave", ""), plugin_block("permissions", RULES));
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), &plugins)).unwrap();

    let output = json_prompt_command(dir.path(), None, "remember teal")
        .env("AGENT_HOST_TEST_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));

    let events = validated_lines(&stdout);
    let types: BTreeSet<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    for expected in [
        "session_started",
        "plugin_loaded",
        "user_message",
        "injected_message",
        "model_request",
        "assistant_delta",
        "assistant_message",
        "tool_call",
        "plugin",
        "tool_result",
        "tool_decision",
        "approval_requested",
        "approval_answered",
        "turn_ended",
    ] {
        assert!(types.contains(expected), "no `{expected}` event in the run:\n{stdout}");
    }
    let answered = events.iter().find(|e| e["type"] == "approval_answered").unwrap();
    assert_eq!(answered["answer"], "unanswerable", "{answered}");
    let decisions: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_decision")
        .map(|e| e["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["deny", "deny"], "echo refused by the rule, touch by agent.on_ask:\n{stdout}");
    let last = events.last().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["reason"].as_str(), last["iterations"].as_u64()),
        (Some("turn_ended"), Some("done"), Some(2)),
        "{stdout}"
    );
}

#[test]
fn a_line_the_types_cannot_produce_does_not_match() {
    let validator = committed_validator();
    for line in [
        r#"{"type":"turn_ended","reason":"finished","iterations":1}"#,
        r#"{"type":"approval_answered","id":"c","name":"t","answer":"allow_always"}"#,
        r#"{"type":"tool_decision","id":"c","name":"t","decision":"maybe","reason":"r","decided_by":"operator"}"#,
        r#"{"type":"injected_message","plugin":"p","role":"narrator","content":"c"}"#,
        r#"{"type":"model_request","iteration":1,"tools":2}"#,
        r#"{"type":"no_such_event"}"#,
    ] {
        let event: Value = serde_json::from_str(line).unwrap();
        assert!(!validator.is_valid(&event), "accepted: {line}");
    }
}
