//! The first run a newcomer meets: the shipped config with no endpoint plays the offline
//! demo, and at a terminal the console then stays open for `/todos`, `/mode`, `/plugins`;
//! with input piped in it ends after the demo's turn, as a script expects.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use crate::support::pty::pseudo_terminal;
use crate::support::repo_root;

fn shipped_demo() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command
        .current_dir(repo_root())
        .args(["--config", "config.toml"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

#[test]
fn at_a_terminal_the_demo_leaves_the_console_open_for_the_commands_it_suggests() {
    // A pseudo-terminal for stdin: the host sees a person at a terminal. Its output goes to
    // a pipe (so, no colours) for the test to read.
    let (mut keyboard, terminal) = pseudo_terminal(24, 80);

    let child = shipped_demo().stdin(Stdio::from(terminal)).spawn().unwrap();
    keyboard.write_all(b"/todos\n/mode\n/plugins\n/quit\n").unwrap();
    // The terminal echoes what is typed; drain it so the echo never fills up.
    let echo = std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = keyboard.read_to_end(&mut sink);
    });
    let output = child.wait_with_output().unwrap();
    drop(echo);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));

    let banner = stdout.find("That was the offline demo").unwrap_or_else(|| panic!("no banner: {stdout}"));
    let after = &stdout[banner..];
    assert!(after.contains("/help lists their commands"), "{after}");
    // `/todos`: the demo's three items, all done.
    for title in ["Collect what changed", "Draft the note", "Proofread it"] {
        assert!(after.contains(title), "`/todos` lists `{title}`: {after}");
    }
    assert!(after.contains("mode: plan"), "`/mode` answers: {after}");
    assert!(
        after.contains("agent-mode@") && after.contains("permissions@"),
        "`/plugins` lists them: {after}"
    );
    // The demo's own turn came before the banner.
    assert!(
        stdout[..banner].contains("agent-host 0.1: every behaviour beyond calling the model"),
        "{stdout}"
    );
}

#[test]
fn with_input_piped_in_the_demo_ends_after_its_turn() {
    let mut child = shipped_demo().stdin(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"/todos\n").unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("agent-host 0.1: every behaviour beyond calling the model"), "{stdout}");
    assert!(!stdout.contains("That was the offline demo"), "no console: {stdout}");
}
