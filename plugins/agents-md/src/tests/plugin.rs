//! The plugin through its exports, as the host calls them: a session starts, each turn's
//! prompt arrives, and `provide` is asked before each model call.

use agent_host_sdk::testing;
use serde_json::json;

use super::{AgentsMdFiles, Workspace, harness, session_start, user_prompt};

/// A workspace with a root AGENTS.md and two nested ones.
fn project() -> Workspace {
    let workspace = Workspace::new();
    workspace
        .file("AGENTS.md", "Run `make check` before you finish.\n")
        .file("web/AGENTS.md", "Use pnpm, never npm.\n")
        .file("api/AGENTS.md", "Every handler returns JSON errors.\n")
        .file("api/v1/AGENTS.md", "Frozen: change nothing here.\n");
    workspace
}

#[test]
fn untrusted_nothing_is_read_and_the_log_says_so_once() {
    let workspace = project();
    let plugin = harness(&workspace, json!({}));
    assert_eq!(session_start(&plugin), None);
    assert_eq!(user_prompt(&plugin, "hello").context, None);
    let contribution = plugin.provide();
    assert_eq!(contribution.instructions, None);
    assert!(testing::take_reusable(), "it depends on the configuration alone");
    assert_eq!(testing::stored("agents_md"), None, "nothing was read");
    assert!(testing::take_events().is_empty());
    let line = format!(
        "Level::Info AGENTS.md files under {} are not read: `trust_project` is false (set it to true to offer them)",
        workspace.config_path()
    );
    assert_eq!(testing::logs(), [line]);
    assert!(plugin.command("agents-md", "").unwrap().contains("are not read: `trust_project` is false"));
}

#[test]
fn a_root_agents_md_alone_is_offered_under_its_heading() {
    let workspace = Workspace::new();
    workspace.file("AGENTS.md", "Run `make check` before you finish.\n");
    let plugin = harness(&workspace, json!({"trust_project": true}));
    session_start(&plugin);
    user_prompt(&plugin, "hello");
    let instructions = plugin.provide().instructions.expect("the root's instructions");
    assert!(instructions.starts_with("## Project instructions (AGENTS.md)\n"), "{instructions}");
    assert!(
        instructions.ends_with(
            "### `AGENTS.md` (the workspace root): applies to every file in the workspace\n\n\
             Run `make check` before you finish.\n"
        ),
        "{instructions}"
    );
    assert!(testing::take_reusable(), "read from state alone, it may be reused");
    assert!(!testing::logs().iter().any(|line| line.contains("not read")), "{:?}", testing::logs());
}

#[test]
fn nested_files_follow_the_root_by_depth_then_path_each_under_its_heading() {
    let workspace = project();
    let plugin = harness(&workspace, json!({"trust_project": true}));
    user_prompt(&plugin, "hello");
    let instructions = plugin.provide().instructions.unwrap();
    let at = |text: &str| instructions.find(text).unwrap_or_else(|| panic!("{text} in {instructions}"));
    let order = [
        at("Run `make check`"),
        at(
            "### `api/AGENTS.md`: applies to the files under `api/`, and takes precedence there over the AGENTS.md files above it\n\nEvery handler",
        ),
        at("### `web/AGENTS.md`: applies to the files under `web/`"),
        at("Use pnpm"),
        at("### `api/v1/AGENTS.md`: applies to the files under `api/v1/`"),
        at("Frozen"),
    ];
    assert!(order.is_sorted(), "{instructions}");
    assert!(testing::take_reusable());
}

#[test]
fn the_cap_cuts_the_file_that_reaches_it_and_names_the_rest() {
    let workspace = project();
    workspace.agents_md("", &format!("{}\nsecond line, past the cap\n", "r".repeat(1000)));
    let plugin = harness(&workspace, json!({"trust_project": true, "max_kb": 1}));
    user_prompt(&plugin, "hello");
    let instructions = plugin.provide().instructions.unwrap();
    assert!(
        instructions.contains("[`AGENTS.md` is cut here: 1001 of its 1027 bytes are shown"),
        "{instructions}"
    );
    assert!(!instructions.contains("second line"), "{instructions}");
    assert!(
        instructions.contains(
            "Not shown, past the 1 KiB cap (`max_kb`): `api/AGENTS.md`, `web/AGENTS.md`, `api/v1/AGENTS.md`."
        ),
        "{instructions}"
    );
    assert!(
        testing::logs().iter().any(|line| line
            == "Level::Info 1 AGENTS.md files offered (1001 bytes); cut at the cap: AGENTS.md; left out past \
                the cap: api/AGENTS.md, web/AGENTS.md, api/v1/AGENTS.md"),
        "{:?}",
        testing::logs()
    );
}

#[test]
fn a_file_edited_between_turns_is_offered_as_edited_at_the_next_turn() {
    let workspace = project();
    let plugin = harness(&workspace, json!({"trust_project": true}));
    user_prompt(&plugin, "first");
    let kept = testing::stored("agents_md").expect("the reading is kept");
    user_prompt(&plugin, "second");
    assert_eq!(testing::stored("agents_md"), Some(kept), "unchanged, so a reused contribution holds");
    workspace.file("web/AGENTS.md", "Use yarn now.\n");
    assert!(plugin.provide().instructions.unwrap().contains("Use pnpm"), "within a turn, as it was read");
    user_prompt(&plugin, "third");
    let instructions = plugin.provide().instructions.unwrap();
    assert!(instructions.contains("Use yarn now.") && !instructions.contains("Use pnpm"), "{instructions}");
}

#[test]
fn a_bad_file_is_reported_once_by_path_while_the_others_are_offered() {
    let workspace = project();
    workspace.bytes("docs/AGENTS.md", b"\xff\xfe");
    let plugin = harness(&workspace, json!({"trust_project": true}));
    user_prompt(&plugin, "first");
    let path = format!("{}/docs/AGENTS.md", workspace.config_path());
    let events = testing::take_events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].kind, "agents_md_skipped");
    assert_eq!(events[0].payload, json!({"path": path, "reason": "it is not UTF-8 text"}));
    assert_eq!(
        events[0].display.as_deref(),
        Some(format!("agents-md: skipped {path}: it is not UTF-8 text").as_str())
    );
    assert!(testing::logs().contains(&format!("Level::Warn skipped {path}: it is not UTF-8 text")));
    let instructions = plugin.provide().instructions.unwrap();
    assert!(instructions.contains("Use pnpm") && !instructions.contains("docs/"), "{instructions}");
    user_prompt(&plugin, "second");
    assert!(testing::take_events().is_empty(), "said once, not at every turn");
}

#[test]
fn provide_reads_once_when_no_turn_did() {
    let workspace = project();
    let plugin = harness(&workspace, json!({"trust_project": true}));
    assert!(plugin.provide().instructions.unwrap().contains("Use pnpm"));
    assert!(!testing::take_reusable(), "it read files");
    plugin.provide();
    assert!(testing::take_reusable());
}

#[test]
fn the_command_reads_anew_and_lists_the_files_in_order() {
    let workspace = project();
    let plugin = harness(&workspace, json!({"trust_project": true}));
    user_prompt(&plugin, "first");
    workspace.file("web/AGENTS.md", &"w".repeat(2000)).bytes("docs/AGENTS.md", b"\xff");
    let listing = plugin.command("agents-md", "").unwrap();
    let skipped = format!("skipped {}/docs/AGENTS.md: it is not UTF-8 text", workspace.config_path());
    assert_eq!(
        listing,
        format!(
            "4 AGENTS.md files offered, in this order (2100 bytes of the 32 KiB cap):\n  AGENTS.md (36 bytes)\n  \
             api/AGENTS.md (35 bytes)\n  web/AGENTS.md (2000 bytes)\n  api/v1/AGENTS.md (29 bytes)\n{skipped}"
        )
    );
    assert!(plugin.provide().instructions.unwrap().contains("wwww"), "the new reading is kept");
}
