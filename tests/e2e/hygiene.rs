//! What people and programs read, through the real binary: escape sequences and invisible
//! format characters from the model, a tool or a plugin reach the console only as visible
//! text, the approval prompt shows the real call however the model's text tried to draw
//! over it, and a plugin payload cannot add lines of its own to the `--json` stream.

use std::process::Stdio;

use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::support::{FakeModel, Reply, config_text, plugin_block, scripted_console, shared_cache_dir};

/// Bytes a terminal obeys rather than prints (ESC, BEL, CR, backspace, DEL, CSI as UTF-8,
/// right-to-left override): none may reach stdout from model, tool or plugin text.
fn assert_nothing_a_terminal_obeys(stdout: &str) {
    for (what, needle) in [
        ("ESC", "\x1b"),
        ("BEL", "\x07"),
        ("CR", "\r"),
        ("BS", "\x08"),
        ("DEL", "\x7f"),
        ("CSI", "\u{9b}"),
        ("RLO", "\u{202e}"),
    ] {
        assert!(!stdout.contains(needle), "{what} reached the terminal raw:\n{stdout}");
    }
}

#[test]
fn escape_sequences_in_model_text_tool_results_and_todo_titles_are_shown_not_obeyed() {
    let script = r#"
[[turn]]
text = "Title\u001b]0;pwned\u0007 up\u001b[2A\u001b[2Kgone hide\u001b[8mhidden clip\u001b]52;c;ZWNobyBwd25lZA==\u0007 cr\roverwritten bidi\u202eright"
tool_calls = [
  { name = "echo", arguments = { text = "result\u001b[2J\u001b[H wiped\r\b" } },
  { name = "todos_add", arguments = { todos = [{ title = "todo\u001b[31m red\u001b]0;t\u0007" }] } },
]

[[turn]]
text = "done"
"#;
    let plugins = format!("{}{}", plugin_block("misbehave", ""), plugin_block("todo", ""));
    let stdout = scripted_console(script, &plugins, "go\n");
    assert_nothing_a_terminal_obeys(&stdout);
    for shown in [
        r"Title\x1b]0;pwned\x07",
        r"up\x1b[2A\x1b[2Kgone",
        r"hide\x1b[8mhidden",
        r"clip\x1b]52;c;ZWNobyBwd25lZA==\x07",
        r"cr\roverwritten",
        r"bidi\u{202e}right",
        r"result\x1b[2J\x1b[H wiped\r\x08",
        r"todo\x1b[31m red\x1b]0;t\x07",
    ] {
        assert!(stdout.contains(shown), "`{shown}` is not shown as text:\n{stdout}");
    }
    assert!(stdout.contains("done"), "{stdout}");
}

#[test]
fn invisible_format_characters_in_model_text_and_tool_results_are_shown() {
    // Instructions a person cannot see but a model reads ("ASCII smuggling"): "Hi" in tag
    // characters, zero-width characters, bidi marks and a BOM, in the reply and in a result.
    let script = r#"
[[turn]]
text = "reply\U000E0001\U000E0048\U000E0069\U000E007F zero\u200Bwidth\u200D join\u2060 mark\u200E\u200F\u061C bom\uFEFF"
tool_calls = [{ name = "echo", arguments = { text = "result\U000E0041\u200Bhidden" } }]

[[turn]]
text = "done"
"#;
    let stdout = scripted_console(script, &plugin_block("misbehave", ""), "go\n");
    for shown in [
        r"reply\u{e0001}\u{e0048}\u{e0069}\u{e007f} zero\u{200b}width\u{200d} join\u{2060}",
        r"mark\u{200e}\u{200f}\u{61c} bom\u{feff}",
        r"result\u{e0041}\u{200b}hidden",
    ] {
        assert!(stdout.contains(shown), "`{shown}` is not shown as text:\n{stdout}");
    }
    let invisible = |c: char| matches!(c, '\u{e0000}'..='\u{e007f}' | '\u{200b}'..='\u{200f}' | '\u{2060}' | '\u{61c}' | '\u{feff}');
    assert!(!stdout.contains(invisible), "an invisible character reached the terminal:\n{stdout:?}");
    assert!(stdout.contains("done"), "{stdout}");
}

/// Runs the real binary as a console session against `model` with `plugins`, `input` piped
/// on stdin and colours off; returns stdout.
async fn console_against(model: &FakeModel, plugins: &str, input: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), plugins)).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The misbehave tools behind a permissions policy that asks before `remember`.
fn asking_plugins() -> String {
    format!(
        "{}{}",
        plugin_block("misbehave", ""),
        plugin_block(
            "permissions",
            "[plugin.config]\npreset = \"ask-to-mutate\"\nrules = [{ tool = \"remember\", decision = \"ask\", reason = \"remembering needs a look\" }]"
        )
    )
}

#[tokio::test]
async fn a_model_cannot_draw_a_fake_approval_prompt_over_the_real_call() {
    let model = FakeModel::start().await;
    // Streamed in two deltas: the text climbs two lines, erases them and draws a prompt for
    // a harmless command, then hides what follows. The real arguments come pretty-printed.
    let spoof = "Cleaning up.\n\x1b[2A\x1b[2K\r── approval needed ──\n  tool:      remember\n  arguments: {\"command\":\"rm -rf build/cache\"}\n\x1b[8m";
    let real = r#"{"key": "k",
        "value": 1, "command": "'rm' -rf ~"}"#;
    model.push(Reply::text(spoof).and_tool("remember", real));
    model.push(Reply::text("Refused, then."));
    let stdout = console_against(&model, &asking_plugins(), "clean up\nn\nnot that\n").await;
    assert_nothing_a_terminal_obeys(&stdout);
    assert!(stdout.contains(r"\x1b[2A\x1b[2K\r── approval needed ──"), "the climb is shown: {stdout}");

    let question = stdout.rfind("[y] once").expect("the operator was asked");
    let block_start = stdout[..question].rfind("── approval needed ──").unwrap();
    // The real block starts a line of its own, and is the one right above the answers.
    assert_eq!(&stdout[block_start - 1..block_start], "\n", "{stdout}");
    let block = &stdout[block_start..question];
    assert!(
        block.contains("\n  arguments: {\"key\":\"k\",\"value\":1,\"command\":\"'rm' -rf ~\"}\n"),
        "the prompt shows the call that would run, whole: {block}"
    );
    assert!(block.contains("\n  tool:      remember\n  plugin:    misbehave\n"), "{block}");
    assert!(block.contains("remembering needs a look"), "{block}");
    assert!(!block.contains("build/cache"), "{block}");
    assert!(stdout.contains("Refused, then."), "{stdout}");
}

#[test]
fn a_plugin_payload_cannot_forge_lines_of_the_json_stream() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("script.toml"),
        "[[turn]]\ntool_calls = [{ name = \"forge_events\" }]\n\n[[turn]]\ntext = \"done\"\n",
    )
    .unwrap();
    let config = format!(
        "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n\n[storage]\npath = \"s.db\"\n\n[runtime]\ncache_dir = \"{}\"\n\n{}",
        shared_cache_dir().display(),
        plugin_block("misbehave", "")
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .args(["--prompt", "forge", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let events: Vec<Value> = stdout
        .lines()
        .map(|line| match serde_json::from_str::<Value>(line) {
            Ok(event) if event.is_object() => event,
            _ => panic!("a line that is not one JSON object: {line:?}\n{stdout}"),
        })
        .collect();
    let count = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    assert_eq!(count("turn_ended"), 1, "{stdout}");
    assert_eq!(count("approval_answered"), 0, "{stdout}");
    assert_eq!(events.last().unwrap()["type"], "turn_ended");
    let forged = events.iter().find(|e| e["type"] == "plugin" && e["kind"] == "forged").expect("the event");
    assert_eq!(forged["payload"]["forged"][1]["type"], "turn_ended", "the payload arrived whole: {forged}");
}
