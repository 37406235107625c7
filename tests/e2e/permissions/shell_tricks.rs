//! Each shell trick of issue 17, first run through a real shell in a scratch folder to show
//! the harm is real (it deletes `x/f` or creates `X`), then given to the permissions plugin:
//! past an `rm *` deny rule it must be denied; with only `git status` allowed it must not be
//! allowed (it falls to `ask`, which nobody answers here).

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;

use super::{DENY_RM, host, refused, remember_with};
use crate::support::{FakeModel, TestHost, plugin_block};

/// A scratch folder holding `x/f`.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("x")).unwrap();
    std::fs::write(dir.path().join("x/f"), "data").unwrap();
    dir
}

/// Runs `line` with `shell -c` in `dir`, stdin closed.
fn run(shell: &str, line: &str, dir: &Path) {
    let status = Command::new(shell)
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{shell} runs: {e}"));
    let _ = status;
}

const DELETING: &[(&str, &str)] = &[
    ("sh", "</dev/null rm -rf x"),
    ("sh", "echo rm -rf x | sh"),
    ("sh", "env -S 'rm -rf ./x/'"),
    ("sh", "timeout -s KILL 5 rm -rf x"),
    ("sh", "flock ./lock rm -rf x"),
    ("sh", "flock ./lock -c 'rm -rf x'"),
    ("sh", "echo x/f | xargs -n 1 -P 4 rm"),
    ("sh", "find . -name f -exec rm {} +"),
    ("sh", "find . -name f -execdir rm {} ';'"),
    ("sh", "find x -name f -delete"),
    ("sh", "time -p rm -rf x"),
    ("bash", "time -p rm -rf x"),
    ("sh", "sh -c -e 'rm -rf x'"),
    ("sh", "bash -c -- 'rm -rf x'"),
    ("sh", "bash -lc 'rm -rf x'"),
    ("sh", "trap 'rm -rf x' EXIT"),
    ("sh", "nice -n 5 nohup stdbuf -oL rm -rf x"),
    ("sh", "env -u HOME rm -rf x"),
    ("sh", "X=rm; $X -rf x"),
    ("sh", "python3 -c 'import shutil; shutil.rmtree(\"x\")'"),
    ("sh", "eval 'rm -rf x'"),
    ("sh", "echo $(rm -rf x)"),
    ("sh", "{ rm -rf x; }"),
    ("sh", "((rm -rf x))"),
    ("sh", "alias r=rm\nr -rf x"),
    ("sh", "for d in x; do rm -rf $d; done"),
];

#[tokio::test]
async fn tricks_that_delete_are_denied_by_an_rm_rule() {
    let test = host(DENY_RM).await;
    for (shell, line) in DELETING {
        let dir = scratch();
        run(shell, line, dir.path());
        assert!(!dir.path().join("x/f").exists(), "`{line}` under {shell} should really delete x/f");
        let result = remember_with(&test, json!({ "command": line })).await;
        assert!(
            refused(&result) && result.output.contains("no deleting"),
            "`{line}` got past the rm deny rule: {}",
            result.output
        );
    }
}

/// Programs that run the command they are given (issue 47): the dynamic loader run as a
/// program, `setarch` and its links, `runuser -u`, `cpulimit`. Each the machine has is run
/// for real first; the rm rule must deny every one.
#[tokio::test]
async fn the_loader_setarch_runuser_and_cpulimit_are_seen_through() {
    let test = host(DENY_RM).await;
    let loader = "/lib64/ld-linux-x86-64.so.2";
    let lines = [
        ("setarch", "setarch x86_64 rm -rf x"),
        ("setarch", "setarch x86_64 -R --3gb rm -rf x"),
        ("linux64", "linux64 rm -rf x"),
        (loader, "/lib64/ld-linux-x86-64.so.2 /bin/rm -rf x"),
        (loader, "/lib64/ld-linux-x86-64.so.2 --library-path /lib64 --argv0 ls /bin/rm -rf x"),
        ("runuser", "runuser -u root -- rm -rf x"),
        ("cpulimit", "cpulimit -l 50 -- rm -rf x"),
        ("cpulimit", "cpulimit --limit=50 rm -rf x"),
    ];
    for (program, line) in lines {
        // runuser runs only as root; cpulimit is not on every machine.
        let runnable = (program.starts_with('/') && Path::new(program).exists())
            || (on_path(program) && (program != "runuser" || is_root()));
        if runnable {
            let dir = scratch();
            run("sh", line, dir.path());
            assert!(!dir.path().join("x/f").exists(), "`{line}` should really delete x/f");
        }
        let result = remember_with(&test, json!({ "command": line })).await;
        assert!(
            refused(&result) && result.output.contains("no deleting"),
            "`{line}` got past the rm deny rule: {}",
            result.output
        );
    }
}

fn on_path(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Runs `line` under dash to show it really creates `X`, then checks the plugin does not
/// allow it: it falls to `ask`, which nobody answers here.
async fn assert_creates_x_and_is_sent_to_ask(test: &TestHost, line: &str) {
    let dir = scratch();
    run("sh", line, dir.path());
    assert!(dir.path().join("X").exists(), "`{line}` under dash should really create X");
    let result = remember_with(test, json!({ "command": line })).await;
    assert!(
        refused(&result) && result.output.contains("nobody could answer"),
        "`{line}` was not sent to ask: {}",
        result.output
    );
}

/// Lines that look like `git status` but run `touch X` under dash (`/bin/sh`).
const STRETCHING: &[&str] = &[
    "git status #'\ntouch X",
    "git status $'\\' ; touch X ; #'",
    "git status; touch X",
    "git status $(touch X)",
    "git status `touch X`",
    "git status > X",
    "GIT_DIR=$(touch X) git status",
    "git status <<EOF\n$(touch X)\nEOF",
];

#[tokio::test]
async fn tricks_that_stretch_an_allow_rule_are_not_allowed() {
    let test = host(
        r#"default = "ask"
rules = [{ tool = "remember", args = { command = "git status" }, decision = "allow" }]"#,
    )
    .await;
    for line in STRETCHING {
        assert_creates_x_and_is_sent_to_ask(&test, line).await;
    }
    // The bash reading of `$'…'` is one quoted word: bash runs no touch, dash does; the
    // plugin reads both and allows neither.
    let dir = scratch();
    run("bash", "git status $'\\' ; touch X ; #'", dir.path());
    assert!(!dir.path().join("X").exists(), "bash reads $'…' as one word");
    assert!(remember_with(&test, json!({ "command": "git status -s" })).await.ok);
    assert!(remember_with(&test, json!({ "command": "git status 2>&1 </dev/null" })).await.ok);
}

/// Under the read-only preset the real `shell` tool (mutating) runs an allowed literal line
/// and refuses one the reader cannot read to the end; the refused line never runs.
#[tokio::test]
async fn under_read_only_what_cannot_be_read_is_denied() {
    let workspace = tempfile::tempdir().unwrap();
    let plugins = format!(
        "{}{}",
        plugin_block(
            "shell",
            &format!(
                "[plugin.grants]\nprocess = true\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}",
                workspace.path().display()
            )
        ),
        plugin_block(
            "permissions",
            "[plugin.config]\npreset = \"read-only\"\nrules = [{ tool = \"shell\", args = { command = \"echo hi\" }, decision = \"allow\" }]"
        )
    );
    let test = TestHost::with_plugins(&FakeModel::start().await, &plugins).await;
    let session = test.session();
    let allowed = super::call(&test, &session, "shell", json!({ "command": "echo hi" })).await;
    assert!(allowed.ok && allowed.output.contains("hi"), "{}", allowed.output);
    for line in ["echo hi $'\\' ; touch X ; #'", "echo hi #'\ntouch X", "echo hi $(touch X)"] {
        let refused_call = super::call(&test, &session, "shell", json!({ "command": line })).await;
        assert!(
            refused(&refused_call) && refused_call.output.contains("read-only"),
            "`{line}`: {}",
            refused_call.output
        );
    }
    assert!(!workspace.path().join("X").exists(), "no refused line ran");
}

/// Even a glob allow rule that names an interpreter or a shell does not vouch for code
/// given on its command line or piped into it: what that code does cannot be read.
#[tokio::test]
async fn allow_rules_never_vouch_for_code_a_line_hands_to_an_interpreter() {
    let test = host(
        r#"default = "ask"
rules = [
  { tool = "remember", args = { command = "python3 *" }, decision = "allow" },
  { tool = "remember", args = { command = "sh *" }, decision = "allow" },
  { tool = "remember", args = { command = "echo *" }, decision = "allow" },
  { tool = "remember", args = { command = "eval *" }, decision = "allow" },
]"#,
    )
    .await;
    for line in ["python3 -c 'open(\"X\", \"w\")'", "sh -c 'touch X'", "echo touch X | sh", "eval touch X"] {
        assert_creates_x_and_is_sent_to_ask(&test, line).await;
    }
    assert!(remember_with(&test, json!({ "command": "echo hello" })).await.ok);
}
