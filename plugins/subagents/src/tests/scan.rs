//! Finding the definitions: the project's folders (each format's) only when trusted, the
//! operator's always; a definition with a problem reported by path and skipped.

use agent_host_sdk::testing::{self, Emitted, Harness};
use serde_json::json;

use super::{AgentFiles, Folder, fixtures, harness, trusting_fixtures};
use crate::format::Format;

fn instructions(harness: &Harness<crate::config::Config>) -> String {
    harness.provide().instructions.expect("the agents are listed")
}

#[test]
fn definitions_from_every_vendor_folder_are_listed_when_the_project_is_trusted() {
    let plugin = trusting_fixtures(json!({}));
    let listed = instructions(&plugin);
    assert!(listed.starts_with("## Agents\n\n`task` hands a task"), "{listed}");
    let lines: Vec<&str> = listed.lines().filter(|line| line.starts_with("- ")).collect();
    assert_eq!(lines.len(), 4, "{listed}");
    assert!(lines[0].starts_with("- `explore`: Explores the codebase without changing it"));
    assert!(lines[1].starts_with("- `code-reviewer`: Expert code reviewer."));
    assert_eq!(lines[2], "- `review`: Reviews code for quality and best practices without changing it");
    assert!(lines[3].starts_with("- `security-auditor`: Finds security vulnerabilities"));
    assert_eq!(testing::take_events(), [], "nothing was skipped");
    let build =
        format!("{}/{}/build.md is not offered as an agent", fixtures(), Format::OpenCode.project_folder());
    assert!(testing::logs().iter().any(|line| line.contains(&build)), "{:?}", testing::logs());
    let listing = plugin.command("agents", "").unwrap();
    assert!(listing.starts_with("4 agents:\n  explore (project, agent-host) "), "{listing}");
    assert!(listing.contains("  review (project, OpenCode) "), "{listing}");
    assert!(listing.contains("    note: `temperature` is not applied"), "{listing}");
}

#[test]
fn untrusted_project_folders_are_not_read() {
    let plugin = Harness::new(crate::plugin(), json!({"dirs": [], "workspace": fixtures()})).unwrap();
    assert_eq!(plugin.provide().instructions, None, "no agents, nothing listed");
    let listing = plugin.command("agents", "").unwrap();
    assert!(listing.starts_with("no agents found\n"), "{listing}");
    for format in Format::ALL {
        let folder = format!("not used: {}/{} (project agents need", fixtures(), format.project_folder());
        assert!(listing.contains(&folder), "{listing}");
    }
}

#[test]
fn a_malformed_definition_is_reported_by_path_and_skipped_and_the_rest_still_load() {
    let folder = Folder::new();
    folder
        .agent("good", "Does good work.", "", "Be good.")
        .file("bad-yaml.md", "---\nname: x\ndescription: [unclosed\n---\n")
        .file("nameless.md", "---\ndescription: Has no name.\n---\n")
        .agent("shapes", "Odd tools.", "tools: {read_file: true}\n", "")
        .file("twin.md", "---\nname: good\ndescription: Another good.\n---\n")
        .file("notes.txt", "not a definition")
        .file(".draft.md", "---\nname: hidden\n---\n");
    let plugin = harness(&folder, json!({}));
    let listed = instructions(&plugin);
    assert!(listed.contains("- `good`: Does good work.\n"), "{listed}");
    assert_eq!(listed.lines().filter(|line| line.starts_with("- ")).count(), 1, "{listed}");
    let events = testing::take_events();
    let skipped: Vec<(&str, &str)> = events
        .iter()
        .map(|Emitted { kind, payload, .. }| (kind.as_str(), payload["path"].as_str().unwrap()))
        .collect();
    let (bad, nameless, shapes, twin) =
        (folder.at("bad-yaml.md"), folder.at("nameless.md"), folder.at("shapes.md"), folder.at("twin.md"));
    assert_eq!(
        skipped,
        [
            ("subagent_invalid", bad.as_str()),
            ("subagent_invalid", nameless.as_str()),
            ("subagent_invalid", shapes.as_str()),
            ("subagent_invalid", twin.as_str()),
        ]
    );
    assert_eq!(events[1].payload["rules"], json!(["`name` is missing; it is required"]));
    assert_eq!(
        events[1].display.as_deref(),
        Some(format!("subagents: skipped {nameless}: `name` is missing; it is required").as_str())
    );
    assert_eq!(
        events[2].payload["rules"],
        json!(["`tools` must be a comma-separated string or a list of tool names, not a map"])
    );
    assert_eq!(
        events[3].payload["rules"],
        json!([format!("the name `good` is already taken by {}, read first", folder.at("good.md"))])
    );
    assert!(events[0].payload["rules"][0].as_str().unwrap().contains("of bad-yaml.md)"));
    let warned = testing::logs().iter().filter(|line| line.starts_with("Level::Warn skipped ")).count();
    assert_eq!(warned, 4, "{:?}", testing::logs());
}

#[test]
fn the_projects_definitions_come_before_the_operators_and_a_name_is_taken_once() {
    let workspace = Folder::new();
    workspace.file(".claude/agents/explore.md", "---\nname: explore\ndescription: The project's.\n---\n");
    let user = Folder::new();
    user.agent("explore", "The operator's.", "", "").agent("notes", "Takes notes.", "", "");
    let plugin = harness(&user, json!({"trust_project": true, "workspace": workspace.config_path()}));
    let listed = instructions(&plugin);
    assert!(listed.contains("- `explore`: The project's.\n- `notes`: Takes notes.\n"), "{listed}");
    let events = testing::take_events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].payload["path"], user.at("explore.md"));
}

#[test]
fn the_list_is_kept_within_its_budget_and_the_rest_are_named() {
    let folder = Folder::new();
    let long = "word ".repeat(300);
    for name in ["a1", "a2", "a3", "a4"] {
        folder.agent(name, &long, "", "");
    }
    let plugin = harness(&folder, json!({"listing_kb": 1}));
    let listed = instructions(&plugin);
    assert!(listed.len() < 1100, "{}", listed.len());
    assert!(listed.contains("- `a1`: word word"), "{listed}");
    assert!(listed.contains("…\n"), "a long description is cut: {listed}");
    assert!(listed.ends_with("More agents, by name only: `a2`, `a3`, `a4`\n"), "{listed}");
}

#[test]
fn the_list_is_found_once_and_reused_until_agents_finds_it_anew() {
    let folder = Folder::new();
    folder.agent("first", "The first.", "", "");
    let plugin = harness(&folder, json!({}));
    assert!(!instructions(&plugin).contains("`second`"));
    folder.agent("second", "The second.", "", "");
    testing::take_reusable();
    let again = plugin.provide();
    assert!(testing::take_reusable(), "read from state");
    assert!(!again.instructions.unwrap().contains("`second`"), "not read again on every call");
    assert!(plugin.command("agents", "").unwrap().starts_with("2 agents:"));
    assert!(instructions(&plugin).contains("- `second`: The second."));
}
