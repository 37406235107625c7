use agent_host_sdk::testing::{self, Harness};
use serde_json::json;

fn triage() -> Harness<agent_host_sdk::NoConfig> {
    Harness::new(crate::plugin(), json!({})).unwrap()
}

#[test]
fn stages_move_forward_and_review_waits_for_the_todos() {
    let plugin = triage();
    assert_eq!(plugin.status().as_deref(), Some("triage"));
    assert_eq!(plugin.tool("advance_stage", json!({"to": "research"})).unwrap(), "Stage is now research.");
    assert_eq!(testing::take_events()[0].display.as_deref(), Some("mode → research"));
    testing::store_foreign("todo", "items", json!([{"id": 1, "title": "why red", "isComplete": false}]));
    let closed = plugin.tool("advance_stage", json!({"to": "review"})).unwrap_err();
    assert_eq!(closed, "review stays closed while todos are open. Finish or remove these first:\n- why red");
    testing::store_foreign("todo", "items", json!([{"id": 1, "title": "why red", "isComplete": true}]));
    plugin.tool("advance_stage", json!({"to": "review"})).unwrap();
    let back = plugin.tool("advance_stage", json!({"to": "triage"})).unwrap_err();
    assert_eq!(back, "stages only move forward: you are in `review`, so `triage` is behind you");
    assert_eq!(plugin.command("stage", "").unwrap(), "stage: review");
}

#[test]
fn it_takes_no_configuration() {
    assert!(triage().requires().is_empty(), "only review needs the todo grant");
    let error = Harness::new(crate::plugin(), json!({"stages": 2})).err().unwrap();
    assert_eq!(
        error,
        "this plugin takes no configuration (found `stages`); remove its \
         [plugin.config] table"
    );
}
