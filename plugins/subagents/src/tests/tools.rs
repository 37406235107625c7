//! What a definition allows and denies, as the one list a child is started with.

use crate::format::Format;
use crate::tools::{ToolRules, ours, resolve};

fn names(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

#[test]
fn no_list_and_no_denial_is_every_tool_and_a_denial_is_taken_from_all_tools() {
    let all = names(&["read_file", "write_file", "shell"]);
    let mut notes = Vec::new();
    assert_eq!(resolve(ToolRules::default(), &all, &mut notes), None);
    let deny = ToolRules { allow: None, deny: names(&["shell", "write_*"]) };
    assert_eq!(resolve(deny, &all, &mut notes), Some(names(&["read_file"])));
    let star = ToolRules { allow: Some(names(&["*"])), deny: names(&["shell"]) };
    assert_eq!(resolve(star, &all, &mut notes), Some(names(&["read_file", "write_file"])));
    assert!(notes.is_empty(), "{notes:?}");
}

#[test]
fn a_list_keeps_its_order_names_each_tool_once_and_may_name_tools_all_tools_lacks() {
    let all = names(&["read_file"]);
    let rules =
        ToolRules { allow: Some(names(&["grep", "read_file", "grep", "mcp__x__y"])), deny: Vec::new() };
    assert_eq!(resolve(rules, &all, &mut Vec::new()), Some(names(&["grep", "read_file", "mcp__x__y"])));
}

#[test]
fn each_vendors_names_map_to_the_stock_tools_and_unknown_names_stay_as_written() {
    let mut notes = Vec::new();
    let mapped: Vec<Option<String>> = [
        (Format::Claude, "LS"),
        (Format::OpenCode, "patch"),
        (Format::Gemini, "replace"),
        (Format::Agents, "LS"),
        (Format::Claude, "my_plugin_tool"),
    ]
    .into_iter()
    .map(|(format, name)| ours(format, name, &mut notes))
    .collect();
    assert_eq!(
        mapped,
        [Some("list_dir"), Some("edit_file"), Some("edit_file"), Some("LS"), Some("my_plugin_tool")]
            .map(|name| name.map(str::to_owned))
    );
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(ours(Format::Gemini, "google_web_search", &mut notes), None);
    assert_eq!(notes, ["tool `google_web_search` (Gemini CLI) has no counterpart here and is left out"]);
}
