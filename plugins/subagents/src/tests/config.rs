//! The configuration: its defaults, the spellings it accepts, and what it refuses, naming the
//! field.

use agent_host_sdk::testing::Harness;
use serde_json::json;

fn refused(config: serde_json::Value) -> String {
    Harness::new(crate::plugin(), config).err().expect("the config is refused")
}

#[test]
fn the_defaults_need_nothing_of_the_host_and_task_is_declared_not_mutating() {
    let plugin = Harness::new(crate::plugin(), json!({})).unwrap();
    assert!(plugin.requires().is_empty());
    assert_eq!(
        plugin.config(),
        json!({"dirs": [{"path": "/user-agents", "format": "agents"}], "trust_project": false,
               "workspace": "/workspace", "models": {},
               "all_tools": ["read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "shell"],
               "listing_kb": 4})
    );
    let declared = plugin.declared();
    assert_eq!(
        declared.iter().map(|tool| (tool.name.as_str(), tool.mutates)).collect::<Vec<_>>(),
        [("task", false)]
    );
    let schema: serde_json::Value = serde_json::from_str(&declared[0].parameters).unwrap();
    assert_eq!(schema["required"], json!(["agent", "prompt"]));
    assert_eq!(schema["properties"]["context"]["enum"], json!(["fresh", "fork"]), "{schema}");
}

#[test]
fn a_folder_is_a_path_or_a_table_with_its_format_and_is_spelt_once() {
    let plugin = Harness::new(
        crate::plugin(),
        json!({"dirs": ["/agents//mine/", {"path": "/claude-agents", "format": "claude"}, {"path": "/o"}],
               "workspace": "/workspace/"}),
    )
    .unwrap();
    assert_eq!(
        plugin.config()["dirs"],
        json!([{"path": "/agents/mine", "format": "agents"}, {"path": "/claude-agents", "format": "claude"},
               {"path": "/o", "format": "agents"}])
    );
    assert_eq!(plugin.config()["workspace"], "/workspace");
}

#[test]
fn bad_settings_are_refused_naming_the_field() {
    let cases = [
        (json!({"dirs": ["agents"]}), "`dirs[0]`: `agents` is not an absolute path"),
        (json!({"dirs": ["/a", "/b/../etc"]}), "`dirs[1]`: `/b/../etc` contains `..`"),
        (
            json!({"dirs": ["/workspace/.claude/agents"]}),
            "`dirs[0]`: `/workspace/.claude/agents` is inside the workspace",
        ),
        (json!({"dirs": ["/"]}), "`dirs[0]`: `/` is the whole sandbox"),
        (json!({"dirs": ["/a", {"path": "/a/"}]}), "`dirs[1]`: `/a` is already `dirs[0]`"),
        (json!({"dirs": [{"path": "/a", "format": "cursor"}]}), "unknown variant `cursor`"),
        (json!({"dirs": [{"path": "/a", "fromat": "claude"}]}), "unknown field `fromat`"),
        (json!({"dirs": [3]}), "a folder's path, or a table { path, format }"),
        (json!({"workspace": "ws"}), "`workspace`: `ws` is not an absolute path"),
        (json!({"all_tools": ["read_file", " "]}), "`all_tools[1]` is blank"),
        (json!({"models": {"sonnet": ""}}), "`models`: `sonnet` = `` is blank on one side"),
        (json!({"listing_kb": 0}), "`listing_kb` must be at least 1"),
        (json!({"trusted": true}), "unknown field `trusted`"),
    ];
    for (config, expected) in cases {
        let error = refused(config.clone());
        assert!(error.contains(expected), "{config}: {error}");
    }
}
