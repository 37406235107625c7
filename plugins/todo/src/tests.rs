use agent_host_sdk::testing::{self, Harness};
use agent_host_sdk::view::{ChecklistEntry, ChecklistWidget, EntryState, Widget};
use agent_host_sdk::{Capabilities, StopOutcome};
use serde_json::json;

use crate::config::Config;

fn todo(config: serde_json::Value) -> Harness<Config> {
    Harness::new(crate::plugin(), config).expect("the config is accepted")
}

#[test]
fn the_manifest_announces_what_is_declared() {
    let manifest = crate::plugin().manifest();
    assert_eq!(
        manifest.capabilities,
        Capabilities::PROVIDE | Capabilities::CALL_TOOL | Capabilities::STOP | Capabilities::COMMAND
    );
    assert_eq!(manifest.commands[0].name, "todos");
}

#[test]
fn adding_numbers_items_from_one_and_tells_programs_of_the_change() {
    let todo = todo(json!({}));
    let added = todo.tool(
        "todos_add",
        json!({"todos": [{"title": "parse"}, {"title": " test ", "description": "all of it"}]}),
    );
    assert_eq!(
        added.unwrap(),
        r#"[{"id":1,"title":"parse","isComplete":false},{"id":2,"title":"test","description":"all of it","isComplete":false}]"#
    );
    let events = testing::take_events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, "todos-changed");
    assert_eq!(events[0].payload["items"][1]["title"], "test");
    assert_eq!(events[0].display, None, "people see the change in the view");
}

#[test]
fn completing_counts_only_open_known_items() {
    let todo = todo(json!({}));
    todo.tool("todos_add", json!({"todos": [{"title": "a"}, {"title": "b"}]})).unwrap();
    testing::take_events();
    let done =
        todo.tool("todos_complete", json!({"items": [{"id": 2, "reason": "ran"}, {"id": 9, "reason": "?"}]}));
    assert_eq!(done.unwrap(), "1");
    assert_eq!(testing::take_events()[0].payload["items"][1]["isComplete"], true);
    assert_eq!(todo.command("todos", "").unwrap(), "todos 1/2\n  ○ a\n  ✓ b");
    let again = todo.tool("todos_complete", json!({"items": [{"id": 2, "reason": "again"}]}));
    assert_eq!(again.unwrap(), "0");
    assert!(testing::take_events().is_empty(), "nothing changed, nothing emitted");
}

#[test]
fn ids_are_not_reused_after_a_removal() {
    let todo = todo(json!({}));
    todo.tool("todos_add", json!({"todos": [{"title": "a"}, {"title": "b"}]})).unwrap();
    assert_eq!(todo.tool("todos_remove", json!({"ids": [2, 7]})).unwrap(), "1");
    let added = todo.tool("todos_add", json!({"todos": [{"title": "c"}]})).unwrap();
    assert_eq!(added, r#"[{"id":3,"title":"c","isComplete":false}]"#);
}

#[test]
fn a_blank_title_refuses_the_whole_call() {
    let todo = todo(json!({}));
    let error = todo.tool("todos_add", json!({"todos": [{"title": "fine"}, {"title": "  "}]})).unwrap_err();
    assert_eq!(error, "a todo needs a title that is not empty");
}

#[test]
fn default_instructions_are_left_out_of_the_settled_configuration_and_still_given() {
    let default = todo(json!({}));
    assert_eq!(default.config().get("instructions"), None, "the default is not carried to every call");
    let given = default.provide().instructions.expect("instructions");
    assert!(given.starts_with("You can keep a todo list with the todos_* tools."), "{given}");

    let own = todo(json!({"instructions": "Keep a list."}));
    assert_eq!(own.config()["instructions"], "Keep a list.");
    assert_eq!(own.provide().instructions.as_deref(), Some("Keep a list."));
}

#[test]
fn the_list_is_injected_in_the_built_in_form() {
    let todo = todo(json!({}));
    assert_eq!(todo.provide().messages[0].content, "### Current todo list\n- none yet");
    let items = json!({"todos": [{"title": "parse"}, {"title": "test", "description": "all of it"}, {"title": "ship"}]});
    todo.tool("todos_add", items).unwrap();
    todo.tool("todos_complete", json!({"items": [{"id": 1, "reason": "parsed"}]})).unwrap();
    assert_eq!(
        todo.provide().messages[0].content,
        "### Current todo list\n- 1 [done] parse\n- 2 [open] test: all of it\n- 3 [open] ship"
    );
}

#[test]
fn the_list_is_injected_with_the_item_template() {
    let todo = todo(json!({"item_template": "* #{id} {title} is {status}"}));
    todo.tool("todos_add", json!({"todos": [{"title": "a"}]})).unwrap();
    let contribution = todo.provide();
    assert_eq!(contribution.messages[0].content, "### Current todo list\n* #1 a is open");
    assert_eq!(contribution.tools.len(), 5);
    assert!(testing::take_reusable());
    assert_eq!(
        todo.command("todos", "").unwrap(),
        "todos 0/1\n  ○ a",
        "the operator's checklist, not the model's"
    );
}

#[test]
fn the_tool_schemas_are_derived_from_the_argument_types() {
    let contribution = todo(json!({})).provide();
    let add = &contribution.tools[0];
    assert_eq!(add.name, "todos_add");
    let schema: serde_json::Value = serde_json::from_str(&add.parameters).unwrap();
    assert_eq!(schema["required"], json!(["todos"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(schema["properties"]["todos"]["minItems"], json!(1));
    assert_eq!(schema["properties"]["todos"]["items"]["required"], json!(["title"]));
    assert_eq!(
        schema["properties"]["todos"]["items"]["properties"]["title"]["description"],
        json!("A short name for the step.")
    );
    let get_all: serde_json::Value = serde_json::from_str(&contribution.tools[4].parameters).unwrap();
    assert_eq!(get_all["type"], json!("object"));
    assert_eq!(get_all["additionalProperties"], json!(false));
}

#[test]
fn the_loop_continues_while_todos_are_open() {
    let todo = todo(json!({"loop": {"continue_template": "Open:\n{remaining_todos}"}}));
    assert_eq!(todo.stop(), StopOutcome::Stop, "nothing open yet");
    todo.tool("todos_add", json!({"todos": [{"title": "a"}, {"title": "b", "description": "bee"}]})).unwrap();
    todo.tool("todos_complete", json!({"items": [{"id": 1, "reason": "done"}]})).unwrap();
    testing::take_reusable();
    assert_eq!(todo.stop(), StopOutcome::Continue("Open:\n- 2 [open] b: bee".to_owned()));
    assert!(testing::take_reusable(), "decided from the list alone, the outcome may be kept");
}

#[test]
fn the_loop_can_be_switched_off() {
    let todo = todo(json!({"loop": {"enabled": false}}));
    todo.tool("todos_add", json!({"todos": [{"title": "a"}]})).unwrap();
    assert_eq!(todo.stop(), StopOutcome::Stop);
}

#[test]
fn config_errors_name_the_key() {
    let error = Harness::new(crate::plugin(), json!({"loop_enabled": false})).err().unwrap();
    assert!(error.starts_with("`loop_enabled`: unknown field `loop_enabled`"), "{error}");
    let error = Harness::new(crate::plugin(), json!({"loop": {"modes": "execute"}})).err().unwrap();
    assert!(error.starts_with("`loop.modes`: invalid type"), "{error}");
    let error = Harness::new(crate::plugin(), json!({"loop": {"modes": ["execute"]}})).err().unwrap();
    assert!(error.contains("`loop.modes` needs `loop.mode_plugin`"), "{error}");
}

fn entry(title: &str, detail: Option<&str>, state: EntryState) -> ChecklistEntry {
    ChecklistEntry { title: title.to_owned(), state, active_form: None, detail: detail.map(str::to_owned) }
}

#[test]
fn the_view_is_a_checklist_of_the_items_with_their_descriptions() {
    let todo = todo(json!({}));
    assert!(todo.shows());
    let empty = ChecklistWidget { id: "todos".to_owned(), label: "Todos".to_owned(), entries: Vec::new() };
    assert_eq!(todo.view(), vec![Widget::Checklist(empty)], "an empty list is an empty checklist");
    todo.tool(
        "todos_add",
        json!({"todos": [{"title": "parse"}, {"title": "test", "description": "all of it"}]}),
    )
    .unwrap();
    todo.tool("todos_complete", json!({"items": [{"id": 1, "reason": "ran"}]})).unwrap();
    testing::take_events();
    assert_eq!(
        todo.view(),
        vec![Widget::Checklist(ChecklistWidget {
            id: "todos".to_owned(),
            label: "Todos".to_owned(),
            entries: vec![
                entry("parse", None, EntryState::Completed),
                entry("test", Some("all of it"), EntryState::Pending),
            ],
        })]
    );
    assert!(testing::take_events().is_empty(), "a view emits nothing");
    assert!(testing::take_reusable(), "read only from state: the host may show it again without a call");
}

#[test]
fn a_list_that_cannot_be_read_is_shown_as_the_reason() {
    let todo = todo(json!({}));
    testing::store("items", json!({"not": "a list"}));
    let widgets = todo.view();
    let [Widget::Text(text)] = widgets.as_slice() else { panic!("{widgets:?}") };
    assert_eq!((text.id.as_str(), text.label.as_str()), ("todos", "Todos"));
    assert!(text.markdown.starts_with("cannot read the todo list: "), "{}", text.markdown);
}
