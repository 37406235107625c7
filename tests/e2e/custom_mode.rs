//! The custom `triage-modes` plugin: per-stage instructions, the forward-only
//! `advance_stage` tool, the review gate on open todos (read through a `read_state` grant),
//! and `mode-changed` events. Every test runs against the four builds of the same plugin:
//! Rust (`plugins/triage-modes`), Python (`-py`) and TypeScript (`-ts`, on componentize-js's
//! engine and on QuickJS), each built the way a deployment builds it.

use agent_host::Event;
use agent_host::agent::SessionHandle;
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{
    FakeModel, Reply, TestHost, component_block, plugin_block, quickjs_plugin_wasm, source_plugin_block,
};

const GRANT: &str = "[plugin.grants]\nread_state = [\"todo\"]\n";

/// Which build of `triage-modes` a test runs against.
#[derive(Debug, Clone, Copy)]
pub enum Language {
    Rust,
    Python,
    TypeScript,
    /// The TypeScript folder built on the QuickJS engine.
    QuickJs,
}

impl Language {
    /// The plugin's `[[plugin]]` block, with `extra` lines.
    fn block(self, extra: &str) -> String {
        match self {
            Language::Rust => plugin_block("triage-modes", extra),
            Language::Python => source_plugin_block("triage-modes-py", extra),
            Language::TypeScript => source_plugin_block("triage-modes-ts", extra),
            Language::QuickJs => component_block(&quickjs_plugin_wasm("triage-modes-ts"), extra),
        }
    }
}

/// Each named test, once per build: `NAME::rust`, `NAME::python`, `NAME::typescript`,
/// `NAME::quickjs`.
macro_rules! in_every_language {
    ($($test:ident),* $(,)?) => {$(
        mod $test {
            use super::Language;
            #[tokio::test]
            async fn rust() {
                super::$test(Language::Rust).await
            }
            #[tokio::test]
            async fn python() {
                super::$test(Language::Python).await
            }
            #[tokio::test]
            async fn typescript() {
                super::$test(Language::TypeScript).await
            }
            #[tokio::test]
            async fn quickjs() {
                super::$test(Language::QuickJs).await
            }
        }
    )*};
}

in_every_language!(
    each_stage_brings_its_own_instructions,
    stages_only_move_forward,
    review_stays_closed_while_todos_are_open,
    without_the_grant_the_gate_says_which_grant_is_missing,
    a_config_table_is_refused,
    the_view_shows_the_stage_as_a_choice_only_the_model_moves,
);

/// triage-modes (with `extra`) beside the `todo` plugin it gates on.
async fn host_with(language: Language, model: &FakeModel, extra: &str) -> TestHost {
    let plugins = format!("{}{}", language.block(extra), plugin_block("todo", ""));
    TestHost::with_plugins(model, &plugins).await
}

async fn advance(test: &TestHost, session: &SessionHandle, to: &str) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, "advance_stage", &json!({ "to": to }), &*test.events).await.unwrap()
}

fn set_todos(session: &agent_host::state::Session, items: Value) {
    session.bag().put("todo", "items", Some(items.to_string()));
}

fn stage(session: &agent_host::state::Session) -> Option<Value> {
    session.bag().get_json("triage-modes", "mode")
}

async fn each_stage_brings_its_own_instructions(language: Language) {
    let model = FakeModel::start().await;
    model.push(Reply::tool("advance_stage", r#"{"to":"research"}"#));
    model.push(Reply::text("researching"));
    let test = host_with(language, &model, GRANT).await;
    let session = test.session();
    test.turn(&session, "the build is red").await.unwrap();
    let requests = model.requests();
    let prompt = |i: usize| requests[i]["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(prompt(0).contains("You are in the `triage` stage") && prompt(0).contains("You are triaging."));
    assert!(
        prompt(1).contains("You are in the `research` stage") && prompt(1).contains("You are researching.")
    );
    assert!(!prompt(1).contains("You are triaging."), "only the current stage's instructions");
    let result = requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(result["content"], "Stage is now research.");
}

async fn stages_only_move_forward(language: Language) {
    let test = host_with(language, &FakeModel::start().await, GRANT).await;
    let session = test.session();
    for (to, expected) in [("triage", "behind you"), ("Research", "unknown stage `Research`")] {
        let refused = advance(&test, &session, to).await;
        assert!(!refused.ok && refused.output.contains(expected), "{to}: {}", refused.output);
    }
    assert!(advance(&test, &session, "research").await.ok);
    for to in ["research", "triage"] {
        let refused = advance(&test, &session, to).await;
        assert!(!refused.ok && refused.output.contains("only move forward"), "{to}: {}", refused.output);
    }
    assert_eq!(stage(&*session.lock().await), Some(json!("research")));
    let mut locked = session.lock().await;
    assert_eq!(test.host.command(&mut locked, "/stage", &*test.events).await.unwrap(), "stage: research");
}

async fn review_stays_closed_while_todos_are_open(language: Language) {
    let test = host_with(language, &FakeModel::start().await, GRANT).await;
    let session = test.session();
    assert!(advance(&test, &session, "research").await.ok);
    set_todos(
        &*session.lock().await,
        json!([
            {"id": 1, "title": "read the CI log", "isComplete": true},
            {"id": 2, "title": "bisect the failure", "isComplete": false}
        ]),
    );
    let refused = advance(&test, &session, "review").await;
    assert!(!refused.ok, "{refused:?}");
    assert!(refused.output.contains("bisect the failure"), "{}", refused.output);
    assert!(!refused.output.contains("read the CI log"), "only open todos are listed: {}", refused.output);
    assert_eq!(stage(&*session.lock().await), Some(json!("research")), "the refused switch left no trace");

    set_todos(&*session.lock().await, json!([{"id": 2, "title": "bisect the failure", "isComplete": true}]));
    let entered = advance(&test, &session, "review").await;
    assert!(entered.ok, "{entered:?}");
    assert_eq!(stage(&*session.lock().await), Some(json!("review")));

    let changes: Vec<Value> = test
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Plugin { kind, payload, .. } if kind == "mode-changed" => Some(payload.value()),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes,
        [
            json!({"from": "triage", "to": "research", "by": "model"}),
            json!({"from": "research", "to": "review", "by": "model"})
        ]
    );
}

async fn without_the_grant_the_gate_says_which_grant_is_missing(language: Language) {
    let test = host_with(language, &FakeModel::start().await, "").await;
    let session = test.session();
    assert!(advance(&test, &session, "research").await.ok, "only review needs the grant");
    let refused = advance(&test, &session, "review").await;
    assert!(!refused.ok && refused.output.contains("read_state"), "{}", refused.output);
}

async fn a_config_table_is_refused(language: Language) {
    let model = FakeModel::start().await;
    let config =
        crate::support::config_text(&model.url(), &language.block("[plugin.config]\nstages = [\"a\"]\n"));
    let error = TestHost::new(&config).await.err().expect("refused");
    assert!(format!("{error:#}").contains("takes no configuration"), "{error:#}");
}

/// The view: the stages as a choice with the current one, in the `mode` category, with no
/// command (only the model moves it); the status follows the stage too.
async fn the_view_shows_the_stage_as_a_choice_only_the_model_moves(language: Language) {
    let test = host_with(language, &FakeModel::start().await, GRANT).await;
    let session = test.session();
    let shown = |events: Vec<Event>| -> Vec<Value> {
        events
            .into_iter()
            .filter_map(|event| match event {
                Event::ViewChanged { view } if view.plugin == "triage-modes" => {
                    Some(serde_json::to_value(&view.widgets).unwrap())
                }
                _ => None,
            })
            .collect()
    };
    test.host.refresh_views(&mut *session.lock().await, &*test.events).await;
    let stages = |current: &str| {
        json!([{
            "widget": "choice", "id": "stage", "label": "Stage", "current": current, "category": "mode",
            "options": [
                {"value": "triage", "label": "Triage",
                 "description": "Work out what the report is about and write the open questions down"},
                {"value": "research", "label": "Research",
                 "description": "Answer the open questions; review opens when every todo is done"},
                {"value": "review", "label": "Review",
                 "description": "Summarise the findings and recommend what comes next"}
            ]
        }])
    };
    assert_eq!(shown(test.take_events()), [stages("triage")]);
    assert!(advance(&test, &session, "research").await.ok);
    test.host.refresh_views(&mut *session.lock().await, &*test.events).await;
    assert_eq!(shown(test.take_events()), [stages("research")]);
    let status = test.host.plugins().status(&*session.lock().await).await;
    assert_eq!(status, ["research"]);
}

/// The fenced blocks of docs/plugin-authoring.md, in order: (info string, body).
fn guide_blocks() -> Vec<(String, String)> {
    let guide =
        std::fs::read_to_string(crate::support::repo_root().join("docs/plugin-authoring.md")).unwrap();
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in guide.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_owned(), String::new())),
            (Some(_), Some("")) => blocks.push(open.take().unwrap()),
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// The crate folder a guide step `cd FOLDER && … cargo build|test …` builds when it has no
/// lock file by the time cargo first builds it: none before the step, and no `cargo
/// generate-lockfile` earlier in it. Cargo would write one as it builds, resolving the
/// dependencies afresh; the guide's crates start with theirs.
fn built_without_a_lock(dir: &std::path::Path, body: &str) -> Option<String> {
    let (folder, rest) = body.trim().strip_prefix("cd ")?.split_once(" && ")?;
    let steps: Vec<&str> = rest.split(" && ").map(str::trim).collect();
    let build =
        steps.iter().position(|step| step.starts_with("cargo build") || step.starts_with("cargo test"))?;
    let locked =
        dir.join(folder).join("Cargo.lock").is_file() || steps[..build].contains(&"cargo generate-lockfile");
    (!locked).then(|| folder.to_owned())
}

/// Every crate folder the guide has made so far builds into one shared folder, kept on the
/// machine beside the plugin toolchains (a clean clone has no `target/`, and the SDK's
/// dependencies are what an author's machine would have compiled once): each crate's `target`
/// is a link to it, so the paths the guide names
/// (`greeter/target/wasm32-wasip2/release/greeter.wasm`) hold, and the dependencies compile
/// once for the guide's three crates and for every run after, while each crate of the guide
/// still builds from its fresh folder.
fn share_build_folders(dir: &std::path::Path) {
    let home = std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME is set"));
    let shared = home.join(".cache/agent-host/e2e-guide-builds");
    std::fs::create_dir_all(&shared).expect("the shared build folder");
    for entry in std::fs::read_dir(dir).expect("the guide's folder") {
        let folder = entry.expect("an entry").path();
        let target = folder.join("target");
        if folder.join("Cargo.toml").is_file() && std::fs::symlink_metadata(&target).is_err() {
            std::os::unix::fs::symlink(&shared, &target).expect("link the crate's target folder");
        }
    }
}

/// Runs the authoring guide as written: every `sh` block in order in a fresh folder (with
/// the checkout beside it as `agent-host/`), every `file=` block written before the next:
/// the Rust greeter, the `guard` hook and the `pace` mode plugin (its own tests run
/// natively first), then the Python greeter and the TypeScript one, from empty folders.
#[test]
fn the_authoring_guide_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(crate::support::repo_root(), dir.path().join("agent-host")).unwrap();
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_agent-host")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut runs: Vec<(String, String)> = Vec::new();
    for (info, body) in guide_blocks() {
        if let Some(file) = info.split_whitespace().find_map(|word| word.strip_prefix("file=")) {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, &body).unwrap();
        } else if info == "sh" {
            share_build_folders(dir.path());
            if let Some(folder) = built_without_a_lock(dir.path(), &body) {
                panic!("the guide builds `{folder}` before it has a Cargo.lock: `{}`", body.trim());
            }
            let output = std::process::Command::new("sh")
                .arg("-c")
                .arg(&body)
                .current_dir(dir.path())
                .env("PATH", &path)
                .env("NO_COLOR", "1")
                .env_remove("OPENAI_API_KEY")
                // A nested cargo must not share this test build's target folder or flags.
                .env_remove("CARGO_TARGET_DIR")
                .env_remove("CARGO_BUILD_TARGET")
                .env_remove("RUSTFLAGS")
                .env_remove("CARGO_ENCODED_RUSTFLAGS")
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "`{}` failed:\n{}\n{}",
                body.trim(),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            runs.push((body.clone(), String::from_utf8_lossy(&output.stdout).into_owned()));
        }
    }
    assert!(runs.len() >= 4, "the guide's commands were found ({})", runs.len());
    assert!(dir.path().join("greeter/target/wasm32-wasip2/release/greeter.wasm").is_file());
    assert!(dir.path().join("guard/target/wasm32-wasip2/release/guard.wasm").is_file());
    assert!(dir.path().join("pace/target/wasm32-wasip2/release/pace.wasm").is_file());
    assert!(dir.path().join("greeter-py/build/greeter.wasm").is_file());
    assert!(dir.path().join("greeter-ts/build/greeter.wasm").is_file());
    // The greeter in each language greets Ada with the configured greeting.
    for config in ["config.toml", "config-py.toml", "config-ts.toml"] {
        let (_, output) = runs
            .iter()
            .find(|(command, _)| command.contains(&format!("--config {config} ")))
            .unwrap_or_else(|| panic!("the guide runs the host on {config}"));
        assert!(output.contains(r#""output":"Good morning, Ada!""#), "{config}: {output}");
        assert!(output.contains(r#""kind":"greeted""#), "{config}: {output}");
    }
    let run_on = |config: &str| {
        runs.iter()
            .find(|(command, _)| command.contains(&format!("--config {config} ")))
            .map(|(_, output)| output.as_str())
            .unwrap_or_else(|| panic!("the guide runs the host on {config}"))
    };
    // The hook refuses the blocked name, naming itself, and the greeting never runs.
    let guarded = run_on("config-guard.toml");
    assert!(guarded.contains(r#""decision":"deny""#), "{guarded}");
    assert!(guarded.contains(r#""decided_by":"guard@0.1.0""#), "{guarded}");
    assert!(guarded.contains("`Mallory` is not to be greeted here"), "{guarded}");
    assert!(!guarded.contains("Hello, Mallory!"), "greet ran: {guarded}");
    // The mode plugin answers its command, and the console lists the modes its view offers.
    let paced = run_on("config-pace.toml");
    assert!(paced.contains("mode: plan"), "{paced}");
    assert!(paced.contains("● plan") && paced.contains("○ build"), "{paced}");
}

/// Swapping `agent-mode` for `triage-modes` in config.toml is all a deployment does: the
/// console badge follows the custom plugin's `mode` key the same way, whatever its language.
#[test]
fn a_deployment_using_the_custom_plugin_shows_its_stage_in_the_console() {
    for language in [Language::Rust, Language::Python, Language::TypeScript, Language::QuickJs] {
        shows_its_stage_in_the_console(language);
    }
}

fn shows_its_stage_in_the_console(language: Language) {
    let stdout = crate::support::scripted_console(
        "[[turn]]\ntext = \"Triaging.\"\n\n[[turn]]\ntext = \"\"\ntool_calls = [{ name = \"advance_stage\", arguments = { to = \"research\" } }]\n\n[[turn]]\ntext = \"Researching.\"\n",
        &format!("{}{}", plugin_block("todo", ""), language.block(GRANT)),
        "the build is red\nlook into it\n/stage\n",
    );
    // Each prompt is the stage's badge, then the context's once a call was made.
    let triage =
        stdout.find("[triage] ").unwrap_or_else(|| panic!("{language:?}: no triage badge:\n{stdout}"));
    let research =
        stdout.find("[research] ").unwrap_or_else(|| panic!("{language:?}: no research badge:\n{stdout}"));
    assert!(triage < research, "{language:?}: {stdout}");
    assert!(stdout.contains("stage: research"), "{language:?}: {stdout}");
}
