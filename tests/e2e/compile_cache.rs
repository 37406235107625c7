//! The compile cache holds machine code the host runs without compiling it, so an artifact
//! is used only when its tag verifies under the deployment's key: one tampered with, cut
//! short or swapped for another plugin's is compiled again, with a warning, and the plugin
//! works. The real binary, with a cache of its own.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::support::{FakeModel, TestHost, plugin_block, plugin_wasm};

/// A deployment in a temporary folder whose compile cache is `cache/`, beside the config.
fn deployment(plugins: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[model]\nbase_url = \"http://127.0.0.1:9/v1\"\n\n[storage]\npath = \"s.db\"\n\n[runtime]\ncache_dir = \"cache\"\n\n{plugins}"
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    dir
}

/// `--check`: (stdout, stderr), after checking it succeeded.
fn check(dir: &Path) -> (String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("RUST_LOG")
        .arg("--config")
        .arg(dir.join("config.toml"))
        // Nothing listens at the endpoint; the plugins are what is checked here.
        .args(["check", "--offline"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "stderr: {stderr}");
    (String::from_utf8_lossy(&output.stdout).into_owned(), stderr)
}

/// The `--check` line of the plugin whose name starts the line.
fn line<'a>(stdout: &'a str, plugin: &str) -> &'a str {
    stdout.lines().find(|line| line.starts_with(plugin)).unwrap_or_else(|| panic!("no {plugin}: {stdout}"))
}

fn cached(stdout: &str, plugin: &str) -> bool {
    line(stdout, plugin).contains("from the compile cache")
}

/// The cached artifact of `package`'s component in `dir`'s cache.
fn artifact(dir: &Path, package: &str) -> PathBuf {
    let hash = hex::encode(Sha256::digest(std::fs::read(plugin_wasm(package)).unwrap()));
    let found: Vec<PathBuf> = std::fs::read_dir(dir.join("cache"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with(&hash))
        .collect();
    assert_eq!(found.len(), 1, "one artifact for {package}: {found:?}");
    found[0].clone()
}

#[test]
fn a_tampered_or_truncated_artifact_is_compiled_again_with_a_warning() {
    let dir = deployment(&plugin_block("misbehave", ""));
    let (first, _) = check(dir.path());
    assert!(!cached(&first, "misbehave@"), "{first}");
    let (second, _) = check(dir.path());
    assert!(cached(&second, "misbehave@"), "the control: an intact artifact is used: {second}");
    let key = dir.path().join("cache.key");
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600,
        "the key is the owner's"
    );

    let artifact = artifact(dir.path(), "misbehave");
    let mut bytes = std::fs::read(&artifact).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&artifact, &bytes).unwrap();
    let (stdout, stderr) = check(dir.path());
    assert!(!cached(&stdout, "misbehave@"), "a flipped byte was loaded: {stdout}");
    assert!(stderr.contains("ignoring a cached component"), "{stderr}");
    assert!(stderr.contains("tag does not match"), "{stderr}");
    let (again, _) = check(dir.path());
    assert!(cached(&again, "misbehave@"), "the artifact was written anew: {again}");

    let bytes = std::fs::read(&artifact).unwrap();
    std::fs::write(&artifact, &bytes[..bytes.len() - 4096]).unwrap();
    let (stdout, stderr) = check(dir.path());
    // The tag is the file's trailer: cut short, the file has none.
    assert!(!cached(&stdout, "misbehave@") && stderr.contains("has no tag (cut short"), "{stdout}{stderr}");
}

#[test]
fn an_artifact_changed_after_it_verified_is_checked_again_whatever_its_times_say() {
    let dir = deployment(&plugin_block("misbehave", ""));
    check(dir.path());
    let artifact = artifact(dir.path(), "misbehave");
    // Written a minute ago: settled, so the start that verifies it remembers so.
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let set_times =
        |path: &Path| std::fs::File::options().write(true).open(path).unwrap().set_modified(then).unwrap();
    set_times(&artifact);
    let (verified, _) = check(dir.path());
    assert!(cached(&verified, "misbehave@"), "{verified}");
    let memos: Vec<_> = std::fs::read_dir(dir.path().join("cache/verified")).unwrap().collect();
    assert_eq!(memos.len(), 1, "the verified artifact is remembered");
    let (mapped, _) = check(dir.path());
    assert!(cached(&mapped, "misbehave@"), "{mapped}");

    let mut bytes = std::fs::read(&artifact).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&artifact, &bytes).unwrap();
    set_times(&artifact);
    let (stdout, stderr) = check(dir.path());
    assert!(!cached(&stdout, "misbehave@"), "a byte changed under the old times was loaded: {stdout}");
    assert!(stderr.contains("tag does not match"), "{stderr}");
}

#[test]
fn another_plugins_artifact_in_its_place_is_detected() {
    let dir = deployment(&format!("{}{}", plugin_block("misbehave", ""), plugin_block("todo", "")));
    check(dir.path());
    std::fs::copy(artifact(dir.path(), "todo"), artifact(dir.path(), "misbehave")).unwrap();
    let (stdout, stderr) = check(dir.path());
    assert!(!cached(&stdout, "misbehave@"), "{stdout}");
    assert!(cached(&stdout, "todo@"), "{stdout}");
    assert!(stderr.contains("tag does not match"), "{stderr}");
}

#[tokio::test]
async fn a_plugin_whose_artifact_was_tampered_with_works() {
    let dir = deployment(&plugin_block("misbehave", ""));
    check(dir.path());
    let artifact = artifact(dir.path(), "misbehave");
    let mut bytes = std::fs::read(&artifact).unwrap();
    let end = bytes.len() - 1;
    bytes[end] ^= 0x80;
    std::fs::write(&artifact, &bytes).unwrap();

    let model = FakeModel::start().await;
    let config = std::fs::read_to_string(dir.path().join("config.toml"))
        .unwrap()
        .replace("http://127.0.0.1:9/v1", &model.url())
        .replace("cache_dir = \"cache\"", &format!("cache_dir = \"{}\"", dir.path().join("cache").display()));
    let test = TestHost::new(&config).await.unwrap();
    let session = test.session();
    let mut session = session.lock().await;
    let echo = serde_json::json!({"text": "compiled again"});
    let result = test.host.invoke_tool(&mut session, "echo", &echo, &*test.events).await.unwrap();
    assert!(result.ok && result.output == "compiled again", "{}", result.output);
}
