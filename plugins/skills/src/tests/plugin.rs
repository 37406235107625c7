//! The plugin through its exports, as the host calls them.

use agent_host_sdk::Plugin;
use agent_host_sdk::bindings::agent_host::plugin::types::CallContext;
use agent_host_sdk::compaction::MessageId;
use agent_host_sdk::process::{RunOutput, RunRequest};
use agent_host_sdk::testing::{self, Harness};
use agent_host_sdk::view::Widget;
use serde_json::json;

use super::{Folder, SkillFiles, harness};
use crate::config::Config;

/// A user folder with a good skill `pdf` (a reference, a script, a helper), a good `review`
/// and a broken `Bad`.
fn skills() -> Folder {
    let folder = Folder::new();
    folder
        .skill("pdf", "Reads PDF files.", "# PDF\n\nRun scripts/extract.sh on the file.")
        .file("pdf/references/forms.md", "How to fill forms.")
        .file(
            "pdf/scripts/extract.sh",
            "#!/bin/sh\n. \"$SKILL_DIR/scripts/lib.sh\"\necho \"extracting $1|$2\"\nhelper\n",
        )
        .file(
            "pdf/scripts/lib.sh",
            "helper() { echo \"helped from $(basename \"$SKILL_DIR\" | cut -c1-6)\"; }\n",
        )
        .skill("review", "Reviews code.", "Look for bugs.")
        .skill_md("Bad", "---\nname: Bad\ndescription: d\n---\n");
    folder
}

fn refused(config: serde_json::Value) -> String {
    Harness::new(crate::plugin(), config).err().expect("the config is refused")
}

#[test]
fn the_defaults_need_nothing_of_the_host() {
    let plugin = Harness::new(crate::plugin(), json!({})).unwrap();
    assert!(plugin.requires().is_empty());
    assert_eq!(
        plugin.config(),
        json!({"user_dirs": ["/user-skills"], "project_dirs": [".agents/skills"], "trust_project": false,
               "max_file_kb": 64, "catalog_kb": 8, "script_timeout_ms": 30000, "script_output_kb": 64})
    );
    let names: Vec<String> = plugin.declared().iter().map(|tool| tool.name.clone()).collect();
    assert_eq!(names, ["load_skill", "read_skill_resource", "run_skill_script"]);
    assert_eq!(plugin.declared().iter().map(|tool| tool.mutates).collect::<Vec<_>>(), [false, false, true]);
}

#[test]
fn folders_are_spelt_once_and_bad_ones_are_refused_naming_the_field() {
    let plugin = Harness::new(
        crate::plugin(),
        json!({"user_dirs": ["/skills//mine/"], "project_dirs": ["./.agents/skills/", "/workspace/tools/skills"]}),
    )
    .unwrap();
    assert_eq!(plugin.config()["user_dirs"], json!(["/skills/mine"]));
    assert_eq!(plugin.config()["project_dirs"], json!([".agents/skills", "tools/skills"]));
    let cases = [
        (json!({"user_dirs": ["skills"]}), "`user_dirs[0]`: `skills` is not an absolute path"),
        (json!({"user_dirs": ["/a", "/skills/../etc"]}), "`user_dirs[1]`: `/skills/../etc` contains `..`"),
        (
            json!({"user_dirs": ["/workspace/.agents/skills"]}),
            "`user_dirs[0]`: `/workspace/.agents/skills` is inside the workspace",
        ),
        (json!({"user_dirs": ["/"]}), "`user_dirs[0]`: `/` is the whole sandbox"),
        (json!({"user_dirs": ["/a", "/a/"]}), "`user_dirs[1]`: `/a` is already `user_dirs[0]`"),
        (json!({"project_dirs": ["../skills"]}), "`project_dirs[0]`: `../skills` contains `..`"),
        (json!({"project_dirs": ["/etc/skills"]}), "`project_dirs[0]`: `/etc/skills` is outside /workspace"),
        (json!({"project_dirs": ["."]}), "`project_dirs[0]`: `.` is the workspace itself"),
        (
            json!({"trust_project": true, "project_dirs": []}),
            "`trust_project` is true but `project_dirs` is empty",
        ),
        (json!({"max_file_kb": 0}), "`max_file_kb` must be at least 1"),
        (json!({"script_timeout_ms": 0}), "`script_timeout_ms` must be at least 1"),
        (json!({"trust_project": "yes"}), "`trust_project`: invalid type"),
        (json!({"trusted": true}), "`trusted`: unknown field `trusted`"),
    ];
    for (config, error) in cases {
        let refusal = refused(config.clone());
        assert!(refusal.starts_with(error), "{config}: {refusal}");
    }
}

/// Runs `session-start` as the host does once per new session.
fn session_start(plugin: &Harness<Config>) -> Option<String> {
    let ctx = CallContext {
        session_id: "test-session".to_owned(),
        config: plugin.config().to_string(),
        model_calls: 0,
        turn_iteration: 0,
    };
    let declaration: Plugin<Config> = crate::plugin();
    declaration.session_start_raw(ctx)
}

#[test]
fn the_session_start_finds_the_skills_and_reports_a_broken_one_by_path_and_rule() {
    let folder = skills();
    let plugin = harness(&folder, json!({}));
    assert_eq!(session_start(&plugin), None, "the catalog goes into the system prompt, not the history");
    let events = testing::take_events();
    assert_eq!(events.len(), 1, "{events:?}");
    let path = format!("{}/Bad/SKILL.md", folder.config_path());
    let rule = "`name` \"Bad\" holds `B`: only lowercase letters a-z, digits 0-9 and hyphens are allowed";
    assert_eq!(events[0].kind, "skill_invalid");
    assert_eq!(events[0].payload, json!({"path": path, "rules": [rule]}));
    assert_eq!(events[0].display.as_deref(), Some(format!("skills: skipped {path}: {rule}").as_str()));
    assert!(
        testing::logs().iter().any(|line| line == &format!("Level::Warn skipped {path}: {rule}")),
        "{:?}",
        testing::logs()
    );

    let contribution = plugin.provide();
    let instructions = contribution.instructions.expect("the catalog");
    assert!(
        instructions.contains("- `pdf`: Reads PDF files.\n- `review`: Reviews code.\n"),
        "{instructions}"
    );
    assert!(!instructions.contains("Bad"), "{instructions}");
    assert!(testing::take_reusable(), "read from state alone, it may be reused");
    assert!(testing::take_events().is_empty(), "provide scans nothing once the catalog is kept");
}

#[test]
fn provide_finds_the_skills_once_when_no_session_start_did() {
    let folder = skills();
    let plugin = harness(&folder, json!({}));
    assert!(plugin.provide().instructions.unwrap().contains("`pdf`"));
    assert!(!testing::take_reusable(), "it read folders");
    assert_eq!(testing::take_events().len(), 1);
    plugin.provide();
    assert!(testing::take_reusable());
    assert!(testing::take_events().is_empty());
}

#[test]
fn load_skill_returns_the_body_and_the_skills_files() {
    let folder = skills();
    let plugin = harness(&folder, json!({}));
    let loaded = plugin.tool("load_skill", json!({"name": "pdf"})).unwrap();
    assert!(
        loaded.starts_with(
            "# Skill `pdf`\n\n# PDF\n\nRun scripts/extract.sh on the file.\n\n## Files of `pdf`"
        ),
        "{loaded}"
    );
    assert!(loaded.ends_with("- references/forms.md\n- scripts/extract.sh\n- scripts/lib.sh\n"), "{loaded}");
    assert_eq!(
        testing::stored("loaded"),
        Some(json!([{"name": "pdf", "call_id": "call-1"}])),
        "the call that loaded it is noted, to pin its result"
    );
    let unknown = plugin.tool("load_skill", json!({"name": "Bad"})).unwrap_err();
    assert_eq!(unknown, "there is no skill named `Bad`; the skills are: pdf, review");
}

#[test]
fn a_skill_broken_after_the_scan_is_not_loaded() {
    let folder = skills();
    let plugin = harness(&folder, json!({}));
    plugin.command("skills", "").unwrap();
    folder.skill_md("review", "---\nname: review\n---\n");
    let error = plugin.tool("load_skill", json!({"name": "review"})).unwrap_err();
    assert_eq!(
        error,
        format!(
            "the skill `review` cannot be loaded now: {}/review/SKILL.md: `description` is missing; it is required",
            folder.config_path()
        )
    );
}

#[test]
fn a_resource_is_read_inside_its_skill_and_an_escape_is_refused() {
    let folder = skills();
    folder.link("pdf/escape", "../review");
    let plugin = harness(&folder, json!({"max_file_kb": 1}));
    assert_eq!(
        plugin.tool("read_skill_resource", json!({"skill": "pdf", "path": "references/forms.md"})).unwrap(),
        "How to fill forms."
    );
    let cases = [
        (
            "../review/SKILL.md",
            "skill `pdf`: `../review/SKILL.md` contains `..`; paths must stay inside the skill's folder",
        ),
        (
            "escape/SKILL.md",
            "skill `pdf`: `escape/SKILL.md` goes through the symlink `escape`, which leads outside the skill's folder",
        ),
        (
            "/etc/passwd",
            "skill `pdf`: `/etc/passwd` is an absolute path; give a path relative to the skill's folder",
        ),
    ];
    for (path, error) in cases {
        assert_eq!(
            plugin.tool("read_skill_resource", json!({"skill": "pdf", "path": path})).unwrap_err(),
            error
        );
    }
    folder.file("pdf/references/big.md", &"x".repeat(1025));
    let big =
        plugin.tool("read_skill_resource", json!({"skill": "pdf", "path": "references/big.md"})).unwrap_err();
    assert_eq!(
        big,
        "skill `pdf`: `references/big.md` takes 1025 bytes, over the 1024 bytes one read may return (`max_file_kb`)"
    );
}

#[test]
fn a_loaded_skills_result_is_kept_through_a_compaction() {
    let folder = skills();
    let plugin = harness(&folder, json!({}));
    let history = agent_host_sdk::testing::History::new().user("go").build();
    let budget = agent_host_sdk::testing::budget(&history, 1000, 100);
    assert_eq!(plugin.pre_compact(&budget).keep, [], "nothing loaded, nothing kept");
    plugin.tool("load_skill", json!({"name": "pdf"})).unwrap();
    assert_eq!(plugin.pre_compact(&budget).keep, [], "its result is not in the history (yet)");
    testing::set_result_position("call-1", 7);
    let outcome = plugin.pre_compact(&budget);
    assert_eq!(outcome.keep, [MessageId::Message(7)]);
    assert_eq!(outcome.veto, None, "it never holds a compaction back");
    // It registers the pre-compact hook only.
    assert_eq!(plugin.spec().hooks, agent_host_sdk::compaction::CompactionHooks::PRE_COMPACT);
}

/// Runs the command as the host's `process.run` would, with `sh -c`, in a temporary
/// working folder, with a `/tmp` of its own as the sandbox gives it (here `TMPDIR`, gone
/// with the folder).
fn really_run(request: &RunRequest) -> Result<RunOutput, String> {
    let workdir = tempfile::tempdir().unwrap();
    let tmp = workdir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(&request.command)
        .current_dir(workdir.path())
        .env("TMPDIR", &tmp)
        .output()
        .map_err(|error| error.to_string())?;
    Ok(RunOutput {
        status: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        timed_out: false,
        truncated: false,
        timeout_cut_to_ms: None,
    })
}

fn no_grant(_: &RunRequest) -> Result<RunOutput, String> {
    Err("plugin `skills` may not run processes: grant it with `process = true` under its [plugin.grants] in config.toml".to_owned())
}

#[test]
fn a_script_runs_from_a_copy_of_scripts_with_its_arguments_quoted() {
    let folder = skills();
    let plugin = harness(&folder, json!({}));
    testing::on_process(really_run);
    let args = json!({"skill": "pdf", "script": "scripts/extract.sh", "args": ["it's a file.pdf", "$HOME; rm -rf /"]});
    let output = plugin.tool("run_skill_script", args).unwrap();
    assert_eq!(
        output,
        "exit status: 0\nstdout:\nextracting it's a file.pdf|$HOME; rm -rf /\nhelped from skill.\n\nstderr:\n"
    );
    let leading =
        plugin.tool("run_skill_script", json!({"skill": "pdf", "script": "extract.sh", "args": []})).unwrap();
    assert!(leading.starts_with("exit status: 0\nstdout:\nextracting |\n"), "{leading}");
    let outside = plugin
        .tool("run_skill_script", json!({"skill": "pdf", "script": "references/forms.md"}))
        .unwrap_err();
    assert_eq!(
        outside,
        "skill `pdf`: `references/forms.md` is not under scripts/; only a skill's scripts run"
    );
}

#[test]
fn without_the_process_grant_the_script_tool_says_what_to_grant() {
    let folder = skills();
    let plugin = harness(&folder, json!({}));
    testing::on_process(no_grant);
    let error =
        plugin.tool("run_skill_script", json!({"skill": "pdf", "script": "scripts/extract.sh"})).unwrap_err();
    assert_eq!(
        error,
        "cannot run `scripts/extract.sh` of skill `pdf`: plugin `skills` may not run processes: grant it with \
         `process = true` under its [plugin.grants] in config.toml"
    );
}

#[test]
fn the_skills_command_finds_them_anew_and_lists_them() {
    let folder = skills();
    let plugin = harness(&folder, json!({}));
    plugin.command("skills", "").unwrap();
    plugin.tool("load_skill", json!({"name": "review"})).unwrap();
    folder.skill("notes", "Takes notes.", "");
    testing::take_events();
    let listing = plugin.command("skills", "").unwrap();
    let dir = folder.config_path();
    assert_eq!(
        listing,
        format!(
            "3 skills:\n  notes (user) {dir}/notes\n  pdf (user) {dir}/pdf\n  review (user, loaded) {dir}/review\n\
             skipped {dir}/Bad/SKILL.md: `name` \"Bad\" holds `B`: only lowercase letters a-z, digits 0-9 and hyphens are allowed"
        )
    );
    assert_eq!(testing::take_events().len(), 1, "the broken one is reported again");
}

#[test]
fn the_view_lists_the_skills_found_and_which_are_loaded() {
    let folder = skills();
    let plugin = harness(&folder, json!({}));
    assert!(plugin.shows());
    assert!(plugin.view().is_empty(), "nothing found yet");
    plugin.tool("load_skill", json!({"name": "pdf"})).unwrap();
    let view = plugin.view();
    let [Widget::Text(text)] = view.as_slice() else { panic!("one text widget: {view:?}") };
    assert_eq!((text.id.as_str(), text.label.as_str()), ("skills", "Skills"));
    assert!(
        text.markdown.starts_with("- `pdf` (user) — **loaded**\n- `review` (user)\n\nSkipped:\n- `"),
        "{}",
        text.markdown
    );
}
