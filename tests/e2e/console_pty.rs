//! The console as a person meets it: the real binary under a real pseudo-terminal, its screen
//! read back with a terminal emulator (vt100), so each test asserts what is on the screen:
//! history recalled with Up across runs, Tab completing a command and a choice's value,
//! markdown rendered as it streams, the spinner gone once text streams, tool cards, Ctrl-C
//! ending a slow turn with the session kept, and a raw escape in a reply shown escaped. Every
//! screen a test waited for is kept under `target/console-screens/`, so a failure shows it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::console::{Console, PATIENCE, prompt_line, session_id};
use crate::support::{FakeModel, Reply, config_text, console_on, plugin_block, writable_workspace};

/// A deployment on `model` with the test plugin that shows a checklist and a choice.
fn deployment(model: &FakeModel) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text(&model.url(), &plugin_block("viewer", ""))).unwrap();
    (dir, config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_is_recalled_with_up_and_ctrl_r_in_a_later_run() {
    let model = FakeModel::start().await;
    model.fallback(Reply::text("noted"));
    let (dir, config) = deployment(&model);
    let name = "history";
    tokio::task::spawn_blocking(move || {
        let mut first = Console::start(name, &config, &[]);
        first.wait_for_prompt("1-prompt");
        first.keys("remember this line\r");
        first.wait_for("1-reply", "noted");
        assert!(first.leave().success());

        let mut second = Console::start(name, &config, &[]);
        second.wait_for_prompt("2-prompt");
        second.keys("\x1b[A");
        let screen =
            second.wait_until("2-up", |screen| prompt_line(screen).ends_with("> remember this line"));
        assert!(!screen.contains("^[[A"), "{screen}");
        // Ctrl-D deletes a character of a line not empty; Ctrl-C clears it first.
        second.keys("\x03");
        second.wait_for("2-cleared", "Ctrl-C again");
        second.keys("\x12this");
        second.wait_until("2-search", |screen| prompt_line(screen).contains("(search: this)"));
        let screen =
            second.wait_until("2-found", |screen| prompt_line(screen).ends_with("remember this line"));
        assert!(prompt_line(&screen).contains("(search: this)"), "{screen}");
        // Enter takes the line found into the editor, a second one sends it.
        second.keys("\r");
        second.wait_until("2-taken", |screen| prompt_line(screen).ends_with("> remember this line"));
        second.keys("\r");
        second.wait_for("2-sent", "noted");
        assert!(second.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tab_completes_a_slash_command_and_a_choice_value() {
    let model = FakeModel::start().await;
    let (dir, config) = deployment(&model);
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("tab", &config, &[]);
        console.wait_for_prompt("prompt");
        console.keys("/pi\t");
        console.wait_until("command", |screen| prompt_line(screen).ends_with("> /pick"));
        console.keys("b\t");
        console.wait_until("value", |screen| prompt_line(screen).ends_with("> /pick beta"));
        console.keys("\r");
        console.wait_for("switched", "Pick: beta");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_is_rendered_as_markdown_once_the_spinner_is_gone() {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    let reply = "# Release notes\n\nSome **bold** text:\n\n- one\n- two\n\n```rust\nlet x = 1;\n```\n\n| name | size |\n|---|---|\n| a | 1 |\n";
    model.push(Reply::text(reply).held_until(&gate));
    let (dir, config) = deployment(&model);
    let mut console = Console::start("markdown", &config, &[]);
    let console = tokio::task::spawn_blocking(move || {
        console.wait_for_prompt("prompt");
        console.keys("write the notes\r");
        console.wait_for("spinner", "working ·");
        console
    })
    .await
    .unwrap();
    gate.notify_one();
    tokio::task::spawn_blocking(move || {
        console.wait_for("rendered", "Release notes");
        let screen = console.wait_until("status", |screen| {
            screen.matches("session ").count() >= 2 && screen.contains("a    │ 1")
        });
        assert!(!screen.contains("working ·"), "the spinner is gone:\n{screen}");
        assert!(screen.contains("Release notes") && !screen.contains("# Release"), "{screen}");
        assert!(console.bold_at("Release notes"), "the heading is bold:\n{screen}");
        assert!(console.bold_at("bold") && !screen.contains("**"), "{screen}");
        assert!(screen.contains("• one") && screen.contains("• two"), "{screen}");
        assert!(screen.contains("│ let x = 1;") && !screen.contains("```"), "{screen}");
        assert!(screen.contains("name │ size"), "{screen}");
        drop(screen);
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_is_one_card_and_the_status_line_counts_the_checklist() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("viewer_add", r#"{"title":"first step"}"#));
    model.push(Reply::text("added"));
    let (dir, config) = deployment(&model);
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("cards", &config, &[]);
        console.wait_for_prompt("prompt");
        console.keys("add one\r");
        let screen =
            console.wait_until("turn", |screen| screen.contains("added") && screen.contains("· session "));
        assert!(screen.contains("⏺ viewer_add  first step"), "{screen}");
        assert!(screen.contains("⎿ ✓ "), "{screen}");
        assert!(!screen.contains(r#"{"title""#), "no raw JSON:\n{screen}");
        assert!(screen.contains("Plan 0/1 · "), "the checklist's count:\n{screen}");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_ends_a_slow_turn_and_the_session_stays_resumable() {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    model.push(Reply::text("never shown").held_until(&gate));
    model.push(Reply::text("after the cancel"));
    let (dir, config) = deployment(&model);
    let config_path = config.clone();
    let id = tokio::task::spawn_blocking(move || {
        let mut console = Console::start("ctrl-c", &config, &[]);
        let screen = console.wait_for_prompt("prompt");
        let id = session_id(&screen);
        console.keys("a slow one\r");
        console.wait_for("spinner", "working ·");
        console.keys("\x03");
        let screen = console.wait_for("cancelled", "turn cancelled");
        assert!(!screen.contains("working ·"), "{screen}");
        console.keys("still here?\r");
        console.wait_for("after", "after the cancel");
        // Ctrl-C at the prompt asks first; the second one leaves.
        console.keys("\x03");
        console.wait_for("ctrl-c-at-prompt", "Ctrl-C again");
        console.keys("\x03");
        let start = Instant::now();
        while console.child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < PATIENCE, "a second Ctrl-C leaves:\n{}", console.contents());
            std::thread::sleep(Duration::from_millis(50));
        }
        id
    })
    .await
    .unwrap();
    gate.notify_one();

    model.push(Reply::text("resumed"));
    let stdout = console_on(&config_path, Some(&id), "and now?\n").await;
    assert!(stdout.contains("resumed"), "{stdout}");
    let requests = model.requests();
    let sent = &requests.last().unwrap()["messages"];
    let texts: Vec<&str> = sent.as_array().unwrap().iter().filter_map(|m| m["content"].as_str()).collect();
    for kept in ["still here?", "after the cancel", "and now?"] {
        assert!(texts.iter().any(|text| text.contains(kept)), "`{kept}` kept: {}", json!(texts));
    }
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raw_escape_in_a_reply_is_shown_escaped() {
    let model = FakeModel::start().await;
    model.push(Reply::text("before \x1b[2J\x1b]0;pwned\x07 after\n"));
    let (dir, config) = deployment(&model);
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("escape", &config, &[]);
        console.wait_for_prompt("prompt");
        console.keys("say it\r");
        let screen = console.wait_for("reply", "after");
        assert!(screen.contains(r"before \x1b[2J\x1b]0;pwned\x07 after"), "{screen}");
        assert!(screen.contains("Ctrl-R"), "nothing was erased:\n{screen}");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn character_references_in_a_reply_are_shown_never_decoded_into_escapes() {
    let model = FakeModel::start().await;
    // What a model repeats from a file it read: a title, the clipboard (OSC 52), an erase
    // and C1 CSI, each spelled as markdown's character references (hex, decimal, a link).
    model.push(Reply::text(
        "before &#x1b;]0;TITLE&#x7; **and** &#27;]52;c;cHduZWQ=&#7; then &#x1b;[2J &#x9b;2J \
         [link](http://x/&#x1b;]0;LINK&#x7;) after\n",
    ));
    let (dir, config) = deployment(&model);
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("references", &config, &[]);
        console.wait_for_prompt("prompt");
        console.keys("say it\r");
        let screen =
            console.wait_until("reply", |screen| screen.contains(" after") && screen.contains("· session "));
        assert!(
            screen.contains(
                r"before \x1b]0;TITLE\x07 and \x1b]52;c;cHduZWQ=\x07 then \x1b[2J \u{9b}2J link (http://x/\x1b]0;LINK\x07) after"
            ),
            "{screen}"
        );
        assert!(screen.contains("Ctrl-R"), "nothing was erased:\n{screen}");
        // Whatever was written while the reply was drawn (plain, then rendered) holds only
        // the console's own styles: no OSC, no BEL, no erase, no C1.
        let written = console.written();
        let start = find(&written, b"before").expect("the reply was written");
        let end = rfind(&written, b" after").expect("the reply was written whole");
        let reply = &written[start..end];
        for (what, bytes) in [
            ("OSC", &b"\x1b]"[..]),
            ("BEL", b"\x07"),
            ("an erase of the screen", b"\x1b[2J"),
            ("C1 CSI", "\u{9b}".as_bytes()),
        ] {
            assert!(find(reply, bytes).is_none(), "{what} was written raw: {:?}", String::from_utf8_lossy(reply));
        }
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|window| window == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alt_enter_and_a_pasted_block_each_make_one_message_of_several_lines() {
    let model = FakeModel::start().await;
    model.fallback(Reply::text("got it"));
    let (dir, config) = deployment(&model);
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("multi-line", &config, &[]);
        console.wait_for_prompt("prompt");
        // Alt-Enter is ESC then Enter; a terminal brackets what is pasted.
        console.keys("first line\x1b\rsecond line\r");
        console.wait_until("alt-enter", |screen| screen.matches("got it").count() == 1);
        console.keys("\x1b[200~pasted one\npasted two\x1b[201~\r");
        console.wait_until("paste", |screen| screen.matches("got it").count() == 2);
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
    let requests = model.requests();
    let last_user = |request: &serde_json::Value| {
        let messages = request["messages"].as_array().unwrap();
        let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
        user["content"].as_str().unwrap().to_owned()
    };
    assert_eq!(requests.len(), 2, "two messages, two model calls");
    assert!(last_user(&requests[0]).starts_with("first line\nsecond line"), "{}", last_user(&requests[0]));
    assert!(last_user(&requests[1]).starts_with("pasted one\npasted two"), "{}", last_user(&requests[1]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_answered_by_a_key_and_ctrl_c_there_cancels_the_turn() {
    let model = FakeModel::start().await;
    let call = r#"{"key":"a","value":1,"command":"make"}"#;
    model.push(Reply::tool("remember", call));
    model.push(Reply::text("remembered"));
    model.push(Reply::tool("remember", call));
    model.fallback(Reply::text("never after a cancel"));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let permissions = "[plugin.config]\npreset = \"ask-to-mutate\"\nrules = [{ tool = \"remember\", decision = \"ask\", reason = \"remembering needs a look\" }]";
    let plugins = format!("{}{}", plugin_block("misbehave", ""), plugin_block("permissions", permissions));
    std::fs::write(&config, config_text(&model.url(), &plugins)).unwrap();
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("approval", &config, &[]);
        console.wait_for_prompt("prompt");
        console.keys("remember a\r");
        console.wait_for("asked", "[n] deny >");
        console.keys("y");
        console.wait_for("allowed", "remembered");
        console.keys("again\r");
        console.wait_until("asked-again", |screen| screen.matches("[n] deny >").count() == 2);
        console.keys("\x03");
        let screen = console.wait_for("cancelled", "turn cancelled");
        assert!(!screen.contains("never after a cancel"), "{screen}");
        console.wait_for_prompt("prompt-again");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

/// A deployment where every `remember` call asks the operator first.
fn asking_deployment(model: &FakeModel) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let permissions = "[plugin.config]\npreset = \"ask-to-mutate\"\nrules = [{ tool = \"remember\", decision = \"ask\", reason = \"remembering needs a look\" }]";
    let plugins = format!("{}{}", plugin_block("misbehave", ""), plugin_block("permissions", permissions));
    std::fs::write(&config, config_text(&model.url(), &plugins)).unwrap();
    (dir, config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keeps_allowing_the_tool_with_one_key_and_no_enter() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("remember", r#"{"key":"a","value":1}"#));
    model.push(Reply::tool("remember", r#"{"key":"b","value":2}"#));
    model.push(Reply::text("both remembered"));
    let (dir, config) = asking_deployment(&model);
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("approval-always", &config, &[]);
        console.wait_for_prompt("prompt");
        console.keys("remember two\r");
        console.wait_for("asked", "[n] deny >");
        // A key that means nothing is passed over, the question not asked again.
        console.keys("xa");
        let screen = console.wait_for("done", "both remembered");
        assert!(screen.contains("a: always allowed for this tool"), "{screen}");
        assert_eq!(screen.matches("[n] deny >").count(), 1, "asked once:\n{screen}");
        assert_eq!(screen.matches("⏺ remember").count(), 2, "both calls ran:\n{screen}");
        assert!(screen.contains("2 values remembered"), "the second call ran:\n{screen}");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n_denies_with_one_key_and_the_reason_typed_reaches_the_model_esc_gives_none() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("remember", r#"{"key":"a","value":1}"#));
    model.push(Reply::text("understood"));
    model.push(Reply::tool("remember", r#"{"key":"b","value":2}"#));
    model.push(Reply::text("fine, no reason"));
    let (dir, config) = asking_deployment(&model);
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("approval-deny", &config, &[]);
        console.wait_for_prompt("prompt");
        console.keys("remember it\r");
        console.wait_for("asked", "[n] deny >");
        console.keys("n");
        console.wait_for("reason-asked", "reason for the model");
        console.keys("not in this repository\r");
        let screen = console.wait_for("done", "understood");
        assert!(screen.contains("n: denied"), "{screen}");
        assert!(!screen.contains("1 values remembered"), "the call did not run:\n{screen}");
        // Esc at the reason gives none.
        console.wait_for_prompt("prompt-again");
        console.keys("once more\r");
        console.wait_until("asked-again", |screen| screen.matches("[n] deny >").count() == 2);
        console.keys("n");
        console
            .wait_until("reason-asked-again", |screen| screen.matches("reason for the model").count() == 2);
        console.keys("\x1b");
        console.wait_for("done-again", "fine, no reason");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 4, "each call, then its refusal sent back");
    let results = |request: &serde_json::Value| -> Vec<String> {
        let messages = request["messages"].as_array().unwrap();
        messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = results(&requests[1]);
    assert!(first.len() == 1 && first[0].contains("not in this repository"), "{first:?}");
    let second = results(&requests[3]);
    assert!(second.len() == 2 && second[1].contains("the operator declined"), "no reason given: {second:?}");
    assert!(!second[1].contains("not in this repository"), "{second:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_result_is_one_card_line_and_show_prints_it_whole() {
    let model = FakeModel::start().await;
    let lines: Vec<String> = (1..=12).map(|n| format!("result line {n} of 12")).collect();
    let arguments = json!({ "text": lines.join("\n") }).to_string();
    model.push(Reply::tool("echo", &arguments));
    model.push(Reply::text("echoed"));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text(&model.url(), &plugin_block("misbehave", ""))).unwrap();
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("show", &config, &[]);
        console.wait_for_prompt("prompt");
        console.keys("echo it\r");
        let screen =
            console.wait_until("card", |screen| screen.contains("echoed") && screen.contains("· session "));
        assert!(screen.contains("⎿ ✓ result line 1 of 12 · 12 lines"), "{screen}");
        assert!(
            !screen.lines().any(|line| line.trim() == "result line 2 of 12")
                && !screen.contains("line 12 of 12"),
            "one line for the result:\n{screen}"
        );
        console.wait_for_prompt("prompt-again");
        console.keys("/sh\t");
        console.wait_until("completed", |screen| prompt_line(screen).ends_with("> /show"));
        console.keys("\r");
        let screen = console.wait_for("shown", "end of result 1");
        for line in &lines {
            assert!(screen.lines().any(|shown| shown == line), "`{line}` on a line of its own:\n{screen}");
        }
        console.wait_for_prompt("prompt-after-show");
        console.keys("/help\r");
        console.wait_for("help", "/show [N]");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cards_fit_the_terminal_width_and_follow_a_resize() {
    let model = FakeModel::start().await;
    let long = (1..=40).map(|n| format!("w{n}")).collect::<Vec<_>>().join(" ");
    let arguments = json!({ "text": long }).to_string();
    model.push(Reply::tool("echo", &arguments));
    model.push(Reply::text("first done"));
    model.push(Reply::tool("echo", &arguments));
    model.push(Reply::text("second done"));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text(&model.url(), &plugin_block("misbehave", ""))).unwrap();
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start_sized("width", &config, &[], 60);
        console.wait_for_prompt("prompt");
        console.keys("echo it\r");
        console.wait_until("turn", |screen| screen.contains("first done") && screen.contains("· session "));
        let cards = |rows: &[String], nth: usize| {
            let at = rows.iter().enumerate().filter(|(_, row)| row.starts_with("⏺ echo")).nth(nth).unwrap().0;
            (rows[at].clone(), rows[at + 1].clone(), rows[at + 2].clone())
        };
        let rows = console.rows();
        let (call, result, after) = cards(&rows, 0);
        assert_eq!(call.chars().count(), 60, "{call}");
        assert!(call.starts_with("⏺ echo  w1 w2 w3") && call.ends_with('…'), "{call}");
        assert!(
            result.starts_with("  ⎿ ✓ w1 w2") && result.chars().count() <= 60,
            "no wrap:\n{}",
            rows.join("\n")
        );
        assert!(result.trim_end().ends_with(" B"), "the size stays: {result}");
        assert!(after.starts_with("first done"), "no row wrapped onto:\n{}", rows.join("\n"));
        let status = rows.iter().find(|row| row.contains("· session ")).unwrap();
        assert!(status.chars().count() <= 60, "{status}");

        console.resize(90);
        console.wait_for_prompt("resized");
        // Keys typed while the editor takes the terminal back after the turn may be dropped
        // with the switch to raw mode: type until the line shows them, then send it.
        console.type_until_shown("again");
        console.keys("\r");
        console.wait_until("turn-after-resize", |screen| screen.contains("second done"));
        let rows = console.rows();
        let (call, _, after) = cards(&rows, 1);
        assert_eq!(call.chars().count(), 90, "the next card has the new width: {call}");
        assert!(call.ends_with('…'), "{call}");
        assert!(after.starts_with("second done"), "{}", rows.join("\n"));
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_still_streaming_shows_plain_then_rendered_once_it_ends() {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    let before = "The **answer** is \x1b[2J forty";
    model.push(Reply::text(&format!("{before}-two\n")).paused_after(before, &gate));
    let (dir, config) = deployment(&model);
    let mut console = Console::start("partial", &config, &[]);
    let console = tokio::task::spawn_blocking(move || {
        console.wait_for_prompt("prompt");
        console.keys("tell me\r");
        let screen = console.wait_for("partial", "is \\x1b[2J forty");
        assert!(screen.contains("The **answer** is"), "plain while it streams:\n{screen}");
        assert!(!screen.contains("working ·"), "{screen}");
        console
    })
    .await
    .unwrap();
    gate.notify_one();
    tokio::task::spawn_blocking(move || {
        let screen = console.wait_for("ended", "forty-two");
        assert!(screen.contains("The answer is \\x1b[2J forty-two"), "rendered once it ends:\n{screen}");
        assert!(!screen.contains("**"), "the plain line is gone:\n{screen}");
        assert_eq!(screen.matches("forty").count(), 1, "drawn over, not twice:\n{screen}");
        assert!(console.bold_at("answer"), "{screen}");
        assert!(screen.contains("Ctrl-R"), "nothing was erased:\n{screen}");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approval_card_wraps_to_a_narrow_terminal_and_cuts_nothing() {
    let model = FakeModel::start().await;
    let value = (1..=30).map(|n| format!("v{n}")).collect::<Vec<_>>().join("-");
    let arguments = json!({ "key": "k", "value": value }).to_string();
    model.push(Reply::tool("remember", &arguments));
    model.push(Reply::text("kept"));
    let (dir, config) = asking_deployment(&model);
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start_sized("approval-narrow", &config, &[], 60);
        console.wait_for_prompt("prompt");
        console.keys("remember it\r");
        console.wait_for("asked", "[n] deny >");
        let rows = console.rows();
        let start = rows.iter().position(|row| row.starts_with("  arguments: ")).expect("the arguments");
        let end = rows.iter().position(|row| row.starts_with("  asked by: ")).expect("who asked");
        assert!(end > start + 1, "a long call goes on over several rows:\n{}", rows.join("\n"));
        let indent = " ".repeat("  arguments: ".len());
        let mut shown = rows[start]["  arguments: ".len()..].to_owned();
        for row in &rows[start + 1..end] {
            assert!(
                row.starts_with(&indent),
                "under the value's column, not wrapped by the terminal: {row:?}"
            );
            shown.push_str(&row[indent.len()..]);
        }
        assert_eq!(shown.trim_end(), arguments, "the whole call, nothing cut");
        // The choices break between two of them.
        let choices: Vec<&String> = rows.iter().filter(|row| row.starts_with("  [")).collect();
        assert_eq!(choices.len(), 2, "{}", rows.join("\n"));
        assert!(
            choices[1].starts_with("  [e] always these exact arguments  [n] deny >"),
            "{}",
            rows.join("\n")
        );
        console.keys("y");
        console.wait_for("allowed", "kept");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_is_drawn_as_a_diff_under_its_card() {
    let model = FakeModel::start().await;
    let edit = json!({"path": "notes.md", "old_string": "beta", "new_string": "BETA"}).to_string();
    model.push(Reply::tool("edit_file", &edit));
    model.push(Reply::text("edited"));
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.md"), "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\n").unwrap();
    let grant = writable_workspace(workspace.path());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text(&model.url(), &plugin_block("fs", &grant))).unwrap();
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("diff", &config, &[]);
        console.wait_for_prompt("prompt");
        console.keys("edit it\r");
        let screen =
            console.wait_until("diff", |screen| screen.contains("edited") && screen.contains("· session "));
        let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
        let at = rows.iter().position(|row| row.contains("⎿ ✎ notes.md  +1 −1")).expect(&screen);
        // Two lines of context each side, then the tool's result card.
        assert_eq!(
            rows[at + 1..at + 6].iter().map(|row| row.trim()).collect::<Vec<_>>(),
            ["alpha", "- beta", "+ BETA", "gamma", "delta"],
            "{screen}"
        );
        assert!(rows[at + 6].contains("⎿ ✓ replaced 1 occurrence"), "{screen}");
        assert!(!screen.contains("epsilon"), "no more context than two lines:\n{screen}");
        assert!(console.leave().success());
        drop((dir, workspace));
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_d_leaves_with_the_command_that_resumes_the_session() {
    let model = FakeModel::start().await;
    let (dir, config) = deployment(&model);
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("resume-hint", &config, &[]);
        let screen = console.wait_for_prompt("prompt");
        let id = session_id(&screen);
        console.keys("\x04");
        let wanted = format!("agent-host --config {} --session {id}", config.display());
        let screen = console.wait_for("left", &wanted);
        assert!(screen.contains("resume it with"), "{screen}");
        let start = Instant::now();
        while console.child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < PATIENCE, "Ctrl-D leaves:\n{}", console.contents());
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(dir);
    })
    .await
    .unwrap();
}

/// Whether `text` is on consecutive rows of `rows`, broken only between its words.
fn broken_between_words(rows: &[String], text: &str) -> bool {
    let first_word = text.split(' ').next().unwrap();
    let Some(start) = rows.iter().position(|row| row.starts_with(first_word)) else { return false };
    let mut joined = String::new();
    for row in &rows[start..] {
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(row.trim());
        if joined.len() >= text.len() {
            break;
        }
    }
    joined == text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_consoles_own_prose_breaks_between_words_at_a_narrow_terminal() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("remember", r#"{"key":"k","value":1}"#));
    model.push(Reply::text("kept"));
    let reason = "remembering anything at all needs a careful look from the person at the keyboard first";
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let permissions = format!(
        "[plugin.config]\nrules = [{{ tool = \"remember\", decision = \"ask\", reason = \"{reason}\" }}]"
    );
    let plugins = format!("{}{}", plugin_block("misbehave", ""), plugin_block("permissions", &permissions));
    std::fs::write(&config, config_text(&model.url(), &plugins)).unwrap();
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start_sized("prose-wrap", &config, &[], 50);
        console.wait_for_prompt("prompt");
        let intro = "Type a message, /help for commands (Tab completes them), Alt-Enter for a new line, \
                     Ctrl-R to search what you typed before, Ctrl-C to stop a turn, Ctrl-D to leave.";
        let rows = console.rows();
        assert!(broken_between_words(&rows, intro), "the greeting is broken mid-word:\n{}", rows.join("\n"));
        console.keys("remember it\r");
        console.wait_for("asked", "[n] deny >");
        let rows = console.rows();
        let at = rows.iter().position(|row| row.starts_with("  reason:")).expect("the reason");
        let indent = " ".repeat("  reason:    ".len());
        let mut shown = rows[at]["  reason:    ".len()..].trim().to_owned();
        for row in rows[at + 1..].iter().take_while(|row| row.starts_with(&indent)) {
            shown.push(' ');
            shown.push_str(row.trim());
        }
        assert_eq!(shown, reason, "the reason, broken between its words:\n{}", rows.join("\n"));
        console.keys("y");
        console.wait_for("allowed", "kept");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_views_markdown_is_rendered_as_a_replys_is() {
    let model = FakeModel::start().await;
    model.fallback(Reply::text("noted"));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let viewer = plugin_block("viewer", "[plugin.config]\nnote_prompt = true\n");
    std::fs::write(&config, config_text(&model.url(), &viewer)).unwrap();
    tokio::task::spawn_blocking(move || {
        let mut console = Console::start("view-markdown", &config, &[]);
        console.wait_for_prompt("prompt");
        // The viewer's text section shows the last prompt, as markdown.
        console.keys("a **loud** word and `code`\r");
        let screen = console.wait_for("shown", "Last prompt:");
        let line = screen.lines().find(|line| line.starts_with("Last prompt:")).unwrap();
        assert!(line.contains("a loud word and code"), "rendered, not raw:\n{screen}");
        assert!(!line.contains("**") && !line.contains('`'), "{screen}");
        assert!(console.bold_at("loud word"), "strong is bold:\n{screen}");
        assert!(console.leave().success());
        drop(dir);
    })
    .await
    .unwrap();
}
