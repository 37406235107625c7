use agent_host_sdk::StopOutcome;
use agent_host_sdk::testing::{self, Harness};
use agent_host_sdk::view::{ChecklistEntry, ChecklistWidget, EntryState, Widget};
use serde_json::json;

use crate::config::Config;

fn todo_write(config: serde_json::Value) -> Harness<Config> {
    Harness::new(crate::plugin(), config).expect("the config is accepted")
}

fn item(content: &str, status: &str) -> serde_json::Value {
    json!({"content": content, "status": status, "activeForm": format!("{content}ing")})
}

#[test]
fn default_instructions_are_left_out_of_the_settled_configuration_and_still_given() {
    let default = todo_write(json!({}));
    assert_eq!(default.config().get("instructions"), None, "the default is not carried to every call");
    assert!(default.provide().instructions.is_some_and(|given| given.contains("TodoWrite")));

    let own = todo_write(json!({"instructions": "Keep a list."}));
    assert_eq!(own.config()["instructions"], "Keep a list.");
    assert_eq!(own.provide().instructions.as_deref(), Some("Keep a list."));
}

#[test]
fn a_write_stores_the_list_with_fresh_ids_and_tells_programs_of_the_change() {
    let plugin = todo_write(json!({}));
    let answer = plugin.tool(
        "TodoWrite",
        json!({"todos": [item("Build", "completed"), item("Test", "in_progress"), item("Ship", "pending")]}),
    );
    assert_eq!(answer.unwrap(), "[x] Build\n[>] Test <- Testing\n[ ] Ship\n(1/3 completed)");
    assert_eq!(testing::stored("todos").unwrap()[2]["id"], json!("3"));
    let events = testing::take_events();
    assert_eq!(events[0].kind, "todos-changed");
    assert_eq!(events[0].payload["items"][0]["content"], json!("Build"));
    assert_eq!(events[0].display, None, "people see the change in the view");
    assert_eq!(plugin.command("todos", "").unwrap(), "todos 1/3\n  ✓ Build\n  ▸ Test\n  ○ Ship");
}

#[test]
fn a_fresh_id_skips_one_the_snapshot_gives_another_item() {
    let plugin = todo_write(json!({}));
    let mut kept = item("Keep", "pending");
    kept["id"] = json!("1");
    plugin.tool("TodoWrite", json!({"todos": [item("New", "pending"), kept]})).unwrap();
    let stored = testing::stored("todos").unwrap();
    assert_eq!((stored[0]["id"].clone(), stored[1]["id"].clone()), (json!("2"), json!("1")));
}

#[test]
fn two_items_in_progress_are_refused() {
    let plugin = todo_write(json!({}));
    let error = plugin
        .tool(
            "TodoWrite",
            json!({"todos": [item("A", "in_progress"), item("B", "pending"), item("C", "in_progress")]}),
        )
        .unwrap_err();
    assert!(error.starts_with("items 1, 3 are all in_progress"), "{error}");
    assert_eq!(testing::stored("todos"), None, "a refused write changes nothing");
}

#[test]
fn the_item_limit_is_in_the_description_and_enforced() {
    let plugin = todo_write(json!({"max_items": 1}));
    let tool = &plugin.provide().tools[0];
    assert!(tool.description.contains("(at most 1 items)"), "{}", tool.description);
    let error =
        plugin.tool("TodoWrite", json!({"todos": [item("A", "pending"), item("B", "pending")]})).unwrap_err();
    assert_eq!(error, "the list has 2 items; at most 1 are allowed");
}

#[test]
fn the_status_schema_lists_the_three_states() {
    let plugin = todo_write(json!({}));
    let schema: serde_json::Value = serde_json::from_str(&plugin.provide().tools[0].parameters).unwrap();
    let item = &schema["properties"]["todos"]["items"];
    assert_eq!(item["properties"]["status"]["enum"], json!(["pending", "in_progress", "completed"]));
    assert_eq!(item["required"], json!(["content", "status", "activeForm"]));
}

/// The calls as the host makes them: call `n` of the session is prepared (`provide`) with
/// `model_calls = n - 1`, and the tool calls of its reply run with the same count.
#[test]
fn the_nag_comes_after_exactly_n_quiet_calls_since_the_models_own_write() {
    let mut plugin = todo_write(json!({"nag_after_rounds": 2}));
    let nagged = |plugin: &Harness<Config>| {
        plugin
            .provide()
            .messages
            .iter()
            .find(|m| m.content.contains("has not been updated"))
            .map(|m| m.content.clone())
    };
    // Call 1's reply writes the list (a round trip's tool call: turn_iteration 1).
    plugin.turn_iteration = 1;
    plugin.model_calls = 0;
    plugin.tool("TodoWrite", json!({"todos": [item("A", "pending")]})).unwrap();
    // Call 2 follows the write at once; call 3 comes after one quiet call (call 2).
    plugin.model_calls = 1;
    assert_eq!(nagged(&plugin), None, "call 2: no call since the write");
    plugin.model_calls = 2;
    assert_eq!(nagged(&plugin), None, "call 3: one quiet call (2) is not two");
    // Call 4 comes after two quiet calls (2 and 3).
    plugin.model_calls = 3;
    let nag = nagged(&plugin).expect("call 4: two quiet calls");
    assert!(nag.starts_with("The TodoWrite list has not been updated for 2 model calls."), "{nag}");
    plugin.model_calls = 4;
    assert_eq!(nagged(&plugin), None, "once per quiet stretch");
    plugin.model_calls = 5;
    let again = nagged(&plugin).expect("call 6: four quiet calls");
    assert!(again.starts_with("The TodoWrite list has not been updated for 4 model calls."), "{again}");
}

/// A write outside any round trip (turn_iteration 0: a direct call, a command) follows
/// `model_calls` calls, none of them its own.
#[test]
fn the_first_call_reminds_and_a_quiet_stretch_after_a_direct_write_nags() {
    let mut plugin = todo_write(json!({"nag_after_rounds": 2}));
    assert_eq!(plugin.provide().messages[0].content, crate::REMINDER);
    plugin.model_calls = 1;
    plugin.tool("TodoWrite", json!({"todos": [item("A", "pending")]})).unwrap();
    plugin.model_calls = 2;
    assert!(plugin.provide().messages.is_empty(), "one call since the write");
    plugin.model_calls = 3;
    let nag = &plugin.provide().messages[0].content;
    assert!(nag.starts_with("The TodoWrite list has not been updated for 2 model calls."), "{nag}");
    assert!(nag.ends_with("Current list:\n[ ] A\n(0/1 completed)"), "{nag}");
}

#[test]
fn the_loop_lists_what_is_not_completed() {
    let plugin = todo_write(json!({"loop": {"continue_template": "Left:\n{remaining_todos}"}}));
    plugin.tool("TodoWrite", json!({"todos": [item("A", "completed"), item("B", "in_progress")]})).unwrap();
    assert_eq!(plugin.stop(), StopOutcome::Continue("Left:\n[>] B <- Bing".to_owned()));
}

#[test]
fn zero_items_is_not_a_limit() {
    let error = Harness::new(crate::plugin(), json!({"max_items": 0})).err().unwrap();
    assert_eq!(error, "`max_items` must be at least 1");
}

fn entry(title: &str, state: EntryState, active_form: &str) -> ChecklistEntry {
    ChecklistEntry { title: title.to_owned(), state, active_form: Some(active_form.to_owned()), detail: None }
}

#[test]
fn the_view_is_a_checklist_with_each_items_state_and_active_form() {
    let plugin = todo_write(json!({}));
    assert!(plugin.shows());
    let empty = ChecklistWidget { id: "todos".to_owned(), label: "Todos".to_owned(), entries: Vec::new() };
    assert_eq!(plugin.view(), vec![Widget::Checklist(empty)], "an empty list is an empty checklist");
    plugin
        .tool(
            "TodoWrite",
            json!({"todos": [item("Build", "completed"), item("Test", "in_progress"), item("Ship", "pending")]}),
        )
        .unwrap();
    testing::take_events();
    assert_eq!(
        plugin.view(),
        vec![Widget::Checklist(ChecklistWidget {
            id: "todos".to_owned(),
            label: "Todos".to_owned(),
            entries: vec![
                entry("Build", EntryState::Completed, "Building"),
                entry("Test", EntryState::InProgress, "Testing"),
                entry("Ship", EntryState::Pending, "Shiping"),
            ],
        })]
    );
    assert!(testing::take_events().is_empty(), "a view emits nothing");
}

#[test]
fn a_list_that_cannot_be_read_is_shown_as_the_reason() {
    let plugin = todo_write(json!({}));
    testing::store("todos", json!([{"content": "no status"}]));
    let widgets = plugin.view();
    let [Widget::Text(text)] = widgets.as_slice() else { panic!("{widgets:?}") };
    assert_eq!((text.id.as_str(), text.label.as_str()), ("todos", "Todos"));
    assert!(text.markdown.starts_with("cannot read the todo list: "), "{}", text.markdown);
}
