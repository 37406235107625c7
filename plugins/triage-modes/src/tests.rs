use agent_host_sdk::testing::{self, Harness};
use agent_host_sdk::view::{ChoiceOption, ChoiceWidget, Widget};
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

fn stages(current: &str) -> Vec<Widget> {
    let option = |value: &str, label: &str, description: &str| ChoiceOption {
        value: value.to_owned(),
        label: label.to_owned(),
        description: Some(description.to_owned()),
    };
    vec![Widget::Choice(ChoiceWidget {
        id: "stage".to_owned(),
        label: "Stage".to_owned(),
        current: Some(current.to_owned()),
        options: vec![
            option("triage", "Triage", "Work out what the report is about and write the open questions down"),
            option("research", "Research", "Answer the open questions; review opens when every todo is done"),
            option("review", "Review", "Summarise the findings and recommend what comes next"),
        ],
        command: None,
        category: Some("mode".to_owned()),
    })]
}

#[test]
fn the_view_shows_the_stages_and_the_current_one_with_no_command() {
    let plugin = triage();
    assert!(plugin.shows());
    assert_eq!(plugin.view(), stages("triage"), "a session that never advanced is in triage");
    plugin.tool("advance_stage", json!({"to": "research"})).unwrap();
    assert_eq!(plugin.view(), stages("research"));
}

#[test]
fn a_stage_that_cannot_be_read_leaves_the_choice_without_a_current_value() {
    let plugin = triage();
    testing::store("mode", json!("shipping"));
    let widgets = plugin.view();
    let [Widget::Choice(choice)] = widgets.as_slice() else { panic!("{widgets:?}") };
    assert_eq!(choice.current, None);
    assert_eq!(choice.options.len(), 3);
}
