use agent_host_sdk::hook_filter::{ToolFilter, ToolHook};
use agent_host_sdk::testing::{self, Filter, Harness};
use agent_host_sdk::view::{ChoiceOption, ChoiceWidget, Widget};
use agent_host_sdk::{Capabilities, Decision};
use serde_json::json;

use crate::config::Config;

fn agent_mode() -> Harness<Config> {
    Harness::new(crate::plugin(), json!({})).expect("the default config is accepted")
}

fn decision(
    plugin: &Harness<Config>,
    tool: &str,
    mutates: bool,
    args: serde_json::Value,
) -> Option<Decision> {
    plugin.pre_tool_use(if tool == "mode_set" { "agent-mode" } else { "fs" }, tool, mutates, args).decision
}

#[test]
fn the_manifest_announces_status_and_the_gate() {
    let capabilities = crate::plugin().manifest().capabilities;
    assert!(
        capabilities.contains(Capabilities::STATUS | Capabilities::PRE_TOOL_USE | Capabilities::CALL_TOOL)
    );
    assert!(!capabilities.contains(Capabilities::STOP));
}

#[test]
fn a_new_session_is_in_plan_and_only_the_default_is_written_down() {
    let plugin = agent_mode();
    assert_eq!(plugin.status().as_deref(), Some("plan"));
    let contribution = plugin.provide();
    assert!(contribution.instructions.unwrap().contains("The current mode is `plan`."));
    assert!(contribution.messages.is_empty());
    assert!(testing::take_reusable());
    assert_eq!(testing::stored("mode"), None, "no mode is chosen for the session");
    assert_eq!(testing::stored("default_mode"), Some(json!("plan")), "for plugins reading the mode");
    assert_eq!(plugin.tool("mode_get", json!({})).unwrap(), "plan");
}

#[test]
fn the_default_written_down_follows_the_configuration() {
    let execute = Harness::new(crate::plugin(), json!({"default_mode": "execute"})).unwrap();
    // Written down under the configuration before a reload.
    testing::store("default_mode", json!("plan"));
    let contribution = execute.provide();
    assert!(contribution.instructions.unwrap().contains("The current mode is `execute`."));
    assert_eq!(testing::stored("default_mode"), Some(json!("execute")), "a reload changed the default");
    assert_eq!(testing::stored("mode"), None);
}

#[test]
fn in_plan_mode_set_counts_as_mutating_and_names_the_modes() {
    let contribution = agent_mode().provide();
    let set = contribution.tools.iter().find(|tool| tool.name == "mode_set").unwrap();
    assert!(set.mutates);
    assert!(set.description.ends_with("The modes: `plan`, `execute`"), "{}", set.description);
    let get = contribution.tools.iter().find(|tool| tool.name == "mode_get").unwrap();
    assert!(!get.mutates);
}

#[test]
fn plan_refuses_changes_and_asks_before_the_model_leaves() {
    let plugin = agent_mode();
    let Some(Decision::Deny(reason)) = decision(&plugin, "write_file", true, json!({})) else { panic!() };
    assert!(reason.starts_with("`write_file` changes things, and the current mode `plan`"), "{reason}");
    let Some(Decision::Ask(question)) = decision(&plugin, "mode_set", true, json!({"mode": "execute"}))
    else {
        panic!()
    };
    assert!(question.starts_with("the model asks to switch from mode `plan` to `execute`."), "{question}");
    assert_eq!(decision(&plugin, "mode_set", true, json!({"mode": "nonsense"})), None, "left to the tool");
    assert_eq!(decision(&plugin, "read_file", false, json!({})), None);
}

#[test]
fn the_models_switch_is_stored_announced_and_holds_for_the_rest_of_the_reply() {
    let mut plugin = agent_mode();
    plugin.model_calls = 4;
    assert_eq!(plugin.tool("mode_set", json!({"mode": "execute"})).unwrap(), "Mode is now execute.");
    assert_eq!(testing::stored("mode"), Some(json!("execute")));
    let events = testing::take_events();
    assert_eq!(events[0].payload, json!({"from": "plan", "to": "execute", "by": "model"}));
    assert_eq!(events[0].display, None, "people see the switch in the view");
    assert_eq!(view_current(&plugin).as_deref(), Some("execute"));
    assert_eq!(plugin.status().as_deref(), Some("execute"));
    let Some(Decision::Deny(reason)) = decision(&plugin, "write_file", true, json!({})) else { panic!() };
    assert!(reason.contains("this reply switched out of the read-only mode `plan`"), "{reason}");
    plugin.model_calls = 5;
    assert_eq!(decision(&plugin, "write_file", true, json!({})), None, "the next reply may change things");
}

#[test]
fn an_unknown_mode_is_refused_with_the_list() {
    let error = agent_mode().tool("mode_set", json!({"mode": "ship"})).unwrap_err();
    assert_eq!(error, "unknown mode `ship`; the supported modes are `plan`, `execute`");
}

#[test]
fn an_operator_switch_is_announced_once() {
    let plugin = agent_mode();
    assert_eq!(plugin.command("mode", " execute ").unwrap(), "", "the view's switch is the one line shown");
    let events = testing::take_events();
    assert_eq!(events[0].payload, json!({"from": "plan", "to": "execute", "by": "operator"}));
    assert_eq!(events[0].display, None);
    assert_eq!(view_current(&plugin).as_deref(), Some("execute"));
    let first = plugin.provide();
    assert_eq!(
        first.messages[0].content,
        "[Mode changed: the user switched the mode from `plan` to `execute`. Follow the `execute` workflow from now on.]"
    );
    assert!(plugin.provide().messages.is_empty());
    assert_eq!(plugin.command("mode", "").unwrap(), "mode: execute");
    assert_eq!(plugin.command("mode", "execute").unwrap(), "mode: already execute");
}

#[test]
fn a_mode_no_longer_configured_falls_back_to_the_default() {
    let plugin = agent_mode();
    testing::store("mode", json!("review"));
    assert_eq!(plugin.status().as_deref(), Some("plan"));
    let contribution = plugin.provide();
    assert!(
        contribution.messages[0]
            .content
            .starts_with("[Mode changed: the mode `review` is no longer configured")
    );
    assert_eq!(testing::stored("mode"), Some(json!("plan")));
    let events = testing::take_events();
    assert_eq!(events[0].payload, json!({"from": "review", "to": "plan", "by": "host"}));
    assert_eq!(events[0].display, None, "the view shows it");
}

#[test]
fn configure_fills_in_model_may_leave_and_filters_the_gate() {
    let plugin = Harness::new(
        crate::plugin(),
        json!({"modes": [{"name": "look", "description": "Look only.", "allow_mutating": false},
                         {"name": "do", "description": "Do it."}],
               "default_mode": "look"}),
    )
    .unwrap();
    assert_eq!(plugin.config()["modes"][0]["model_may_leave"], json!(false));
    assert_eq!(plugin.config()["modes"][1]["model_may_leave"], json!(true));
    assert_eq!(testing::filters(), [Filter::Only(ToolHook::PreToolUse, ToolFilter::mutating_only())]);
}

#[test]
fn a_default_mode_that_is_not_configured_is_refused() {
    let error = Harness::new(crate::plugin(), json!({"default_mode": "ship"})).err().unwrap();
    assert_eq!(
        error,
        "`default_mode` is `ship`, which is not one of the configured modes (`plan`, `execute`)"
    );
}

fn option(value: &str, description: &str) -> ChoiceOption {
    ChoiceOption {
        value: value.to_owned(),
        label: value.to_owned(),
        description: Some(description.to_owned()),
    }
}

#[test]
fn the_view_is_a_choice_of_the_modes_switched_with_the_mode_command() {
    let plugin = Harness::new(
        crate::plugin(),
        json!({"modes": [{"name": "look", "description": "Look only.\nRead, never write.", "allow_mutating": false},
                         {"name": "do", "description": "Do it."}],
               "default_mode": "look"}),
    )
    .unwrap();
    assert!(plugin.shows());
    let choice = |current: &str| {
        vec![Widget::Choice(ChoiceWidget {
            id: "mode".to_owned(),
            label: "Mode".to_owned(),
            current: Some(current.to_owned()),
            options: vec![option("look", "Look only."), option("do", "Do it.")],
            command: Some("/mode".to_owned()),
            category: Some("mode".to_owned()),
        })]
    };
    assert_eq!(plugin.view(), choice("look"), "a new session is in the default mode");
    plugin.command("mode", "do").unwrap();
    assert_eq!(plugin.view(), choice("do"));
    testing::store("mode", json!("gone"));
    assert_eq!(plugin.view(), choice("look"), "a mode no longer configured shows as the fallback");
    assert!(testing::take_reusable(), "read only from state: the host may show it again without a call");
}

#[test]
fn the_stock_modes_are_offered_with_the_first_line_of_their_workflow() {
    let plugin = agent_mode();
    let widgets = plugin.view();
    let [Widget::Choice(choice)] = widgets.as_slice() else { panic!("{widgets:?}") };
    assert_eq!(choice.current.as_deref(), Some("plan"));
    assert_eq!(
        choice.options,
        [
            option("plan", "Work with the user to agree on a plan before anything is changed."),
            option("execute", "Carry the work through on your own."),
        ]
    );
}

/// The current value of the view's `mode` choice.
fn view_current(plugin: &testing::Harness<Config>) -> Option<String> {
    plugin.view().into_iter().find_map(|widget| match widget {
        agent_host_sdk::Widget::Choice(choice) if choice.id == "mode" => choice.current,
        _ => None,
    })
}

#[test]
fn the_stock_template_and_modes_are_left_out_of_the_settled_configuration_and_still_given() {
    let stock = agent_mode();
    assert_eq!(stock.config().get("template"), None, "the stock template is not carried to every call");
    assert_eq!(stock.config().get("modes"), None, "nor the stock modes");
    let given = stock.provide().instructions.expect("instructions");
    assert!(given.starts_with("## Working modes\n"), "{given}");
    assert!(
        given.contains("#### plan\n\nWork with the user") && given.contains("#### execute\n\n"),
        "{given}"
    );
    assert!(given.contains("The current mode is `plan`."), "{given}");
    let refused = decision(&stock, "write_file", true, json!({}));
    assert!(matches!(refused, Some(Decision::Deny(_))), "plan still forbids changes: {refused:?}");

    let own = Harness::new(
        crate::plugin(),
        json!({"modes": [{"name": "plan", "description": "Think.", "allow_mutating": false}], "default_mode": "plan"}),
    )
    .unwrap();
    assert_eq!(own.config()["modes"][0]["description"], "Think.");
    assert_eq!(own.config()["modes"][0]["model_may_leave"], false, "filled in by configure");
}

#[test]
fn the_template_is_filled_in_one_pass() {
    let plugin = Harness::new(
        crate::plugin(),
        json!({
            "template": "{x} {available_modes}; now {current_mode}, {current_mode}{",
            "modes": [
                {"name": "a", "description": "leave {current_mode} when done"},
                {"name": "b", "description": "B."},
            ],
            "default_mode": "a",
        }),
    )
    .unwrap();
    assert_eq!(
        plugin.provide().instructions.as_deref(),
        Some("{x} #### a\n\nleave a when done\n\n#### b\n\nB.; now a, a{")
    );
}
