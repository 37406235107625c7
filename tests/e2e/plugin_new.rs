//! `agent-host plugin new --lang rust|python|typescript NAME`, through the real binary: the
//! folder it writes, in a temporary folder far from this checkout, is built by the host and
//! loaded, and its tool answers; a folder that exists is refused.

use std::path::Path;
use std::process::Command;

use crate::support::repo_root;

/// One model turn calling the template's tool, then a reply.
const SCRIPT: &str = "[[turn]]\ntext = \"\"\ntool_calls = [{ name = \"greet\", arguments = { name = \"Ada\" } }]\n\n[[turn]]\ntext = \"I greeted Ada.\"\n";

fn agent_host(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command.current_dir(dir).env_remove("OPENAI_API_KEY").env_remove("OPENAI_BASE_URL").env("NO_COLOR", "1");
    command
}

/// `plugin new --lang LANG NAME` in a fresh folder, then the host on a config loading it;
/// the `--json` stream of that turn.
fn new_plugin_answers(lang: &str, name: &str, prepare: impl Fn(&Path)) -> String {
    let dir = tempfile::tempdir().unwrap();
    let made = agent_host(dir.path()).args(["plugin", "new", "--lang", lang, name]).output().unwrap();
    let said = String::from_utf8_lossy(&made.stdout);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert!(said.contains(&format!("path = \"{name}\"")), "it says how to load it: {said}");
    prepare(&dir.path().join(name));

    std::fs::write(dir.path().join("script.toml"), SCRIPT).unwrap();
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n\n[storage]\npath = \"s.db\"\n\n\
             [[plugin]]\npath = \"{name}\"\n"
        ),
    )
    .unwrap();
    let run = agent_host(dir.path())
        .args(["--config", "config.toml", "--json", "--prompt", "I'm Ada."])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(run.status.success(), "{lang}: {}\n{stdout}", String::from_utf8_lossy(&run.stderr));
    assert!(stdout.contains(r#""output":"Hello, Ada!""#), "{lang}: {stdout}");
    assert!(stdout.contains(r#""kind":"greeted""#), "{lang}: {stdout}");

    let again = agent_host(dir.path()).args(["plugin", "new", "--lang", lang, name]).output().unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains(&format!("{name} exists")));
    stdout
}

#[test]
fn a_new_rust_plugin_builds_against_the_sdk_the_binary_carries_and_loads() {
    new_plugin_answers("rust", "new-rust-greeter", |folder| {
        let manifest = std::fs::read_to_string(folder.join("Cargo.toml")).unwrap();
        let sdk = manifest.lines().find(|line| line.starts_with("agent-host-sdk")).unwrap();
        assert!(!sdk.contains(&repo_root().display().to_string()), "the SDK is not the checkout's: {sdk}");
        // Its dependencies compiled once for the whole test run: the plugins' target folder
        // as a shared cache (the SDK copy and the plugin still compile, from their folders).
        std::fs::create_dir(folder.join(".cargo")).unwrap();
        std::fs::write(
            folder.join(".cargo/config.toml"),
            format!("[build]\ntarget-dir = \"{}\"\n", repo_root().join("plugins/target").display()),
        )
        .unwrap();
    });
}

#[test]
fn a_new_python_plugin_builds_and_loads() {
    new_plugin_answers("python", "new-python-greeter", |folder| {
        assert!(folder.join("plugin.py").is_file() && folder.join("pyproject.toml").is_file());
    });
}

#[test]
fn a_new_typescript_plugin_builds_and_loads() {
    new_plugin_answers("typescript", "new-typescript-greeter", |folder| {
        assert!(folder.join("plugin.ts").is_file() && folder.join("package.json").is_file());
    });
}
