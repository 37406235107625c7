//! `agent-host init` and builtins, through the real binary on a machine as a newcomer's may
//! be: no Rust, Python or Node on `PATH`, an empty home (no `~/.cargo`, no toolchains). The
//! config `init` writes loads the stock plugins the binary carries and plays the demo the
//! binary carries; `init` never overwrites a config.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::repo_root;

/// The binary in `dir` with nothing of the test's environment but an empty `PATH` folder and
/// an empty home: no cargo, rustc, rustup, python3, node or npm can be found.
fn bare(dir: &Path, bare: &Path) -> Command {
    let (bin, home) = (bare.join("bin"), bare.join("home"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command.current_dir(dir).env_clear().env("PATH", &bin).env("HOME", &home).env("NO_COLOR", "1");
    command
}

fn said(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The names `plugins/stock.toml` lists: what the binary carries.
fn stock_names() -> Vec<String> {
    let list: toml::Table =
        toml::from_str(&std::fs::read_to_string(repo_root().join("plugins/stock.toml")).unwrap()).unwrap();
    list["plugins"].as_array().unwrap().iter().map(|name| name.as_str().unwrap().to_owned()).collect()
}

#[test]
fn init_in_an_empty_folder_then_the_binary_alone_plays_the_demo_with_no_toolchain() {
    let (dir, env) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let started = Instant::now();
    let init = bare(dir.path(), env.path()).arg("init").output().unwrap();
    let (stdout, stderr) = said(&init);
    assert!(init.status.success(), "{stderr}");
    assert!(stdout.contains("wrote ./config.toml"), "{stdout}");
    assert!(stdout.contains("\n  agent-host\n"), "it says what to run next: {stdout}");
    let shipped = std::fs::read_to_string(repo_root().join("config.toml")).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("config.toml")).unwrap(),
        shipped,
        "one home for the text"
    );

    let demo = bare(dir.path(), env.path()).args(["--prompt", "hi"]).output().unwrap();
    let elapsed = started.elapsed();
    let (stdout, stderr) = said(&demo);
    assert!(demo.status.success(), "{stderr}");
    assert!(stderr.contains("running the offline demo from the copy this binary carries"), "{stderr}");
    assert!(stdout.contains("agent-host 0.1: every behaviour beyond calling the model"), "{stdout}");
    assert!(stdout.contains("Proofread it"), "the demo's todos ran through the builtin: {stdout}");
    // Compiling three components in a debug build takes seconds; a build from source, minutes.
    assert!(elapsed < Duration::from_secs(120), "init and the demo took {elapsed:?}");
    let builtins = dir.path().join(".agent-host/cache/builtin");
    let written: Vec<String> = std::fs::read_dir(&builtins)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written.len(), 3, "the three enabled builtins, written out once: {written:?}");

    let check = bare(dir.path(), env.path()).args(["check", "--offline"]).output().unwrap();
    let (stdout, stderr) = said(&check);
    assert!(check.status.success(), "{stderr}");
    for name in ["todo@", "agent-mode@", "permissions@"] {
        assert!(stdout.contains(name), "{name} is loaded: {stdout}");
    }
    assert!(stdout.contains("from the compile cache"), "the second start compiles nothing: {stdout}");
}

#[test]
fn init_never_overwrites_a_config() {
    let (dir, env) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(dir.path().join("config.toml"), "# mine\n").unwrap();
    let again = bare(dir.path(), env.path()).arg("init").output().unwrap();
    let (stdout, stderr) = said(&again);
    assert_eq!(again.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("./config.toml exists"), "names the file: {stderr}");
    assert!(stderr.contains("never overwrites"), "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.path().join("config.toml")).unwrap(), "# mine\n");
}

#[test]
fn init_dir_makes_the_folder_and_its_config_runs_from_anywhere() {
    let (dir, env) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let init = bare(dir.path(), env.path()).args(["init", "deploy/here"]).output().unwrap();
    let (stdout, stderr) = said(&init);
    assert!(init.status.success(), "{stderr}");
    assert!(stdout.contains("agent-host --config deploy/here/config.toml"), "{stdout}");
    let check = bare(dir.path(), env.path())
        .args(["check", "--offline", "--config", "deploy/here/config.toml"])
        .output()
        .unwrap();
    let (stdout, stderr) = said(&check);
    assert!(check.status.success(), "{stderr}");
    assert!(stdout.contains("todo@"), "{stdout}");
    assert!(dir.path().join("deploy/here/.agent-host/cache/builtin").is_dir(), "beside its config");
}

#[test]
fn an_unknown_builtin_names_the_entry_its_line_and_every_builtin_carried() {
    let (dir, env) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        dir.path().join("config.toml"),
        "[storage]\npath = \"s.db\"\n\n[[plugin]]\nbuiltin = \"nope\"\n",
    )
    .unwrap();
    let check = bare(dir.path(), env.path()).args(["check", "--offline"]).output().unwrap();
    let (stdout, stderr) = said(&check);
    assert_eq!(check.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("config.toml:5: `plugin[0]`"), "the entry and its line: {stderr}");
    assert!(stderr.contains("builtin \"nope\": this binary carries no plugin of that name"), "{stderr}");
    for name in stock_names() {
        assert!(stderr.contains(&format!("\"{name}\"")), "{name} is named among those carried: {stderr}");
    }
}
