//! Child agents (contract 0.2.8) as the command line shows them: `--json` prints the child's
//! `subagent_started`, each of its events wrapped in `subagent` with its own and its parent's
//! session ids, and `subagent_ended`, every line valid against the committed schema; the
//! console draws the child as a card under the call that started it, names it when one of its
//! calls needs an approval, and lists it (`/children`) and prints its transcript
//! (`/children N`) on a real pseudo-terminal.

use std::path::PathBuf;

use serde_json::Value;

use crate::event_schema::validated_lines;
use crate::subagents::{EXPLORER, agent, definitions, subagents, task};
use crate::support::console::Console;
use crate::support::{ASK_ABOUT_TOUCH, FakeModel, Reply, config_text, json_prompt_command, plugin_block};

/// A deployment on `model` whose `task` starts the agents `defined` (name, definition), with
/// `extra` plugin blocks: its folder, the definitions' folder, its config.
fn deployment(
    model: &FakeModel,
    defined: &[(&str, &str)],
    extra: &str,
) -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let agents = definitions(defined);
    let dir = tempfile::tempdir().unwrap();
    let plugins = format!("{}{}{extra}", plugin_block("misbehave", ""), subagents(agents.path()));
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text(&model.url(), &plugins)).unwrap();
    (dir, agents, config)
}

/// The parent asks the explorer, which echoes once and answers.
fn script(model: &FakeModel) {
    model.push(Reply::tool("task", &task("explorer", "find the answer\nand say it")));
    model.push(Reply::text("the explorer says 42"));
    model.on_model(
        "child-model",
        [Reply::tool("echo", r#"{"text":"looking"}"#), Reply::text("the answer is 42")],
    );
}

fn position(events: &[Value], what: &str, matches: impl Fn(&Value) -> bool) -> usize {
    events.iter().position(matches).unwrap_or_else(|| panic!("no {what} in {events:#?}"))
}

#[tokio::test]
async fn json_prints_a_childs_start_its_wrapped_events_and_its_end_all_schema_valid() {
    let model = FakeModel::start().await;
    script(&model);
    let (dir, _agents, _) = deployment(&model, &[("explorer", EXPLORER)], "");
    let output = json_prompt_command(dir.path(), None, "ask the explorer")
        .env("AGENT_HOST_TEST_KEY", "k")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let events = validated_lines(&String::from_utf8_lossy(&output.stdout));

    let parent =
        events[position(&events, "session_started", |e| e["type"] == "session_started")]["session_id"]
            .clone();
    let call =
        &events[position(&events, "the task's call", |e| e["type"] == "tool_call" && e["name"] == "task")];
    let started = position(&events, "subagent_started", |e| e["type"] == "subagent_started");
    let child = &events[started];
    assert_eq!(child["parent_id"], parent, "{child}");
    assert_eq!(child["call_id"], call["id"], "the call that started it: {child}");
    assert_eq!(
        (child["agent"].as_str(), child["prompt"].as_str()),
        (Some("explorer"), Some("find the answer\nand say it"))
    );
    let child_id = child["session_id"].as_str().unwrap();
    assert_ne!(child_id, parent.as_str().unwrap());

    let wrapped: Vec<&Value> = events.iter().filter(|e| e["type"] == "subagent").collect();
    assert!(
        wrapped
            .iter()
            .all(|e| e["session_id"] == child_id && e["parent_id"] == parent && e["agent"] == "explorer"),
        "each wrapped event names the child and its parent: {wrapped:#?}"
    );
    let inner: Vec<&str> = wrapped.iter().map(|e| e["event"]["type"].as_str().unwrap()).collect();
    for kind in
        ["user_message", "model_request", "tool_call", "tool_result", "assistant_message", "turn_ended"]
    {
        assert!(inner.contains(&kind), "the child's own {kind}: {inner:?}");
    }
    let echo = wrapped.iter().find(|e| e["event"]["type"] == "tool_call").unwrap();
    assert_eq!(echo["event"]["name"], "echo");

    let ended = position(&events, "subagent_ended", |e| e["type"] == "subagent_ended");
    let end = &events[ended];
    assert_eq!((end["session_id"].as_str(), end["state"].as_str()), (Some(child_id), Some("done")));
    assert_eq!(end["answer"], "the answer is 42");
    assert!(end["tokens"].as_u64().is_some(), "{end}");
    let first_wrapped = position(&events, "a subagent event", |e| e["type"] == "subagent");
    assert!(started < first_wrapped && first_wrapped < ended, "started, its events, ended");
    let turn_ended = position(&events, "turn_ended", |e| e["type"] == "turn_ended");
    assert!(ended < turn_ended, "the child ends within its parent's turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_draws_a_child_as_a_card_names_it_when_it_asks_and_prints_its_transcript() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("task", &task("fixer", "touch the file\nthen say so")));
    model.push(Reply::text("the fixer is done"));
    model.on_model(
        "child-model",
        [
            Reply::tool("touch", "{}"),
            Reply::tool("echo", r#"{"text":"checked"}"#),
            Reply::text("touched it: all good"),
        ],
    );
    let fixer = agent("fixer", "child-model", "echo, touch");
    let (_dir, _agents, config) =
        deployment(&model, &[("fixer", &fixer)], &plugin_block("permissions", ASK_ABOUT_TOUCH));
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("child-card", &config, &[]);
        console.wait_for_prompt("prompt");
        console.keys("fix it\r");
        let asked = console.wait_for("asked", "[n] deny");
        assert!(asked.contains("╭ fixer · "), "the card's header first:\n{asked}");
        assert!(asked.contains("touch the file"), "its prompt's first line:\n{asked}");
        assert!(
            asked.contains("agent:     fixer (a child agent, session "),
            "the question names the child:\n{asked}"
        );
        console.keys("y");
        let screen = console.wait_until("ended", |screen| {
            screen.contains("the fixer is done") && screen.trim_end().ends_with('>')
        });
        assert!(screen.contains("│ fixer ⏺ touch"), "its calls, a line each:\n{screen}");
        assert!(screen.contains("│ fixer ⏺ echo  checked"), "{screen}");
        assert!(
            screen.contains("╰ fixer done · ") && screen.contains("touched it: all good"),
            "its end and answer:\n{screen}"
        );
        let short = screen.split("/children ").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();

        console.type_until_shown("/children");
        console.keys("\r");
        let listed = console.wait_for("listed", "child agents of this session");
        let row = listed.lines().find(|line| line.trim_start().starts_with("1  fixer")).expect("its row");
        assert!(
            row.contains("done") && row.contains(&short) && row.contains("touched it: all good"),
            "{row}"
        );

        console.type_until_shown(&format!("/children {short}"));
        console.keys("\r");
        let transcript = console.wait_for("transcript", "── end of child 1");
        assert!(transcript.contains("── child 1: fixer (done)"), "{transcript}");
        assert!(transcript.contains("tools: echo, touch · model child-model"), "{transcript}");
        assert!(transcript.contains("system prompt: You are fixer."), "{transcript}");
        assert!(transcript.contains("› touch the file"), "its prompt:\n{transcript}");
        assert!(transcript.contains("⏺ echo  checked") && transcript.contains("⎿ checked"), "{transcript}");
        assert!(console.leave().success());
    })
    .await
    .unwrap();
}
