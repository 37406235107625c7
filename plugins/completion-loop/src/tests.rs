use agent_host_sdk::testing;
use serde_json::json;

use super::*;

fn parse(table: serde_json::Value) -> Result<LoopConfig, String> {
    serde_json::from_value(table).map_err(|error| error.to_string())
}

fn open() -> Result<Vec<String>, String> {
    Ok(vec!["- 1 [open] write the parser".to_owned(), "- 3 [open] test it".to_owned()])
}

#[test]
fn an_empty_table_is_on_everywhere_with_the_plugins_template() {
    testing::reset();
    let mut config = parse(json!({})).unwrap();
    assert_eq!(config.settle("Still open:\n{remaining_todos}").unwrap(), vec![]);
    assert_eq!(config.continue_template.as_deref(), Some("Still open:\n{remaining_todos}"));
    let StopOutcome::Continue(text) = config.decide(open) else { panic!("the loop should continue") };
    assert_eq!(text, "Still open:\n- 1 [open] write the parser\n- 3 [open] test it");
}

#[test]
fn an_unknown_key_is_named() {
    let error = parse(json!({"loop_modes": ["execute"]})).unwrap_err();
    assert!(error.contains("unknown field `loop_modes`"), "{error}");
}

#[test]
fn modes_without_a_mode_plugin_are_refused() {
    let mut config = parse(json!({"modes": ["execute"]})).unwrap();
    let error = config.settle("{remaining_todos}").unwrap_err();
    assert_eq!(error, "`loop.modes` needs `loop.mode_plugin` to say which plugin holds the current mode");
}

#[test]
fn a_template_without_the_placeholder_is_refused() {
    let mut config = parse(json!({"continue_template": "keep going"})).unwrap();
    assert_eq!(
        config.settle("{remaining_todos}").unwrap_err(),
        "`loop.continue_template` must contain `{remaining_todos}`"
    );
}

#[test]
fn modes_require_reading_the_mode_plugin() {
    let mut config = parse(json!({"modes": ["execute"], "mode_plugin": "agent-mode"})).unwrap();
    let requires = config.settle("{remaining_todos}").unwrap();
    assert!(matches!(requires.as_slice(), [Requirement::ReadsState(name)] if name == "agent-mode"));
}

#[test]
fn with_modes_it_runs_only_in_them() {
    testing::reset();
    let mut config = parse(json!({"modes": ["execute"], "mode_plugin": "agent-mode"})).unwrap();
    config.settle("go on: {remaining_todos}").unwrap();
    assert!(!config.runs_now(), "no mode stored yet, and no default said");
    testing::store_foreign("agent-mode", "mode", json!("plan"));
    assert!(matches!(config.decide(open), StopOutcome::Stop));
    testing::store_foreign("agent-mode", "mode", json!("execute"));
    assert!(matches!(config.decide(open), StopOutcome::Continue(_)));
}

#[test]
fn off_or_nothing_open_lets_the_turn_end() {
    testing::reset();
    let mut off = parse(json!({"enabled": false})).unwrap();
    off.settle("{remaining_todos}").unwrap();
    assert!(matches!(off.decide(open), StopOutcome::Stop));
    let mut on = parse(json!({})).unwrap();
    on.settle("{remaining_todos}").unwrap();
    assert!(matches!(on.decide(|| Ok(Vec::new())), StopOutcome::Stop));
}

#[test]
fn without_a_stored_mode_the_mode_plugins_default_decides() {
    testing::reset();
    let mut config = parse(json!({"modes": ["execute"], "mode_plugin": "agent-mode"})).unwrap();
    config.settle("go on: {remaining_todos}").unwrap();
    testing::store_foreign("agent-mode", "default_mode", json!("execute"));
    assert!(matches!(config.decide(open), StopOutcome::Continue(_)), "a session starts in execute");
    testing::store_foreign("agent-mode", "mode", json!("plan"));
    assert!(matches!(config.decide(open), StopOutcome::Stop), "a stored mode wins over the default");
    testing::reset();
    testing::store_foreign("agent-mode", "default_mode", json!("plan"));
    assert!(matches!(config.decide(open), StopOutcome::Stop));
}
