//! A plugin given as a crate folder, edited while the host runs: the watcher rebuilds it
//! with cargo's progress shown, and the next model call is served by the new build; an edit
//! that does not compile is rejected with the compiler's message and the old build serves on.

use std::path::Path;
use std::time::{Duration, Instant};

use agent_host::Event;

use crate::support::{FakeModel, Reply, TestHost, config_text, repo_root};

/// A copy of `plugins/triage-modes` laid out as an author's own crate: the SDK by absolute
/// path, the plugins workspace's lock file, release profile and toolchain, and its target
/// folder shared with `plugins/target`, so the SDK and its dependencies are already built
/// and only the copy compiles. Renamed, so its artifact sits beside the real one's.
fn author_crate() -> tempfile::TempDir {
    let root = repo_root();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    for file in std::fs::read_dir(root.join("plugins/triage-modes/src")).unwrap() {
        let file = file.unwrap().path();
        std::fs::copy(&file, dir.path().join("src").join(file.file_name().unwrap())).unwrap();
    }
    let workspace: toml::Table =
        toml::from_str(&std::fs::read_to_string(root.join("plugins/Cargo.toml")).unwrap()).unwrap();
    let manifest = format!(
        "[package]\nname = \"triage-modes-live\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [lib]\ncrate-type = [\"cdylib\"]\n\n\
         [dependencies]\nagent-host-sdk = {{ path = \"{}\" }}\nserde = {{ version = \"1\", features = [\"derive\"] }}\n\n\
         [workspace]\n\n{}",
        root.join("plugins/sdk").display(),
        toml::to_string(&toml::Table::from_iter([("profile".to_owned(), workspace["profile"].clone())]))
            .unwrap(),
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(root.join("plugins/Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    std::fs::copy(root.join("rust-toolchain.toml"), dir.path().join("rust-toolchain.toml")).unwrap();
    std::fs::create_dir(dir.path().join(".cargo")).unwrap();
    let target = root.join("plugins/target");
    std::fs::write(
        dir.path().join(".cargo/config.toml"),
        format!("[build]\ntarget-dir = \"{}\"\n", target.display()),
    )
    .unwrap();
    dir
}

/// Edits one source file of the crate as an editor would: read, change, save.
fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join("src").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} has no `{from}`");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// Collects events until one matches `done`; returns all of them. The deadline only guards
/// against a hang: a cold build of the SDK on a busy machine takes a while.
async fn events_until(test: &TestHost, done: impl Fn(&Event) -> bool) -> Vec<Event> {
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut seen = Vec::new();
    loop {
        seen.extend(test.take_events());
        if seen.iter().any(&done) {
            return seen;
        }
        assert!(Instant::now() < deadline, "no reload after the edit; events so far: {seen:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn system_prompt(
    test: &TestHost,
    model: &FakeModel,
    session: &agent_host::state::SessionHandle,
) -> String {
    model.push(Reply::text("ok"));
    test.turn(session, "the build is red").await.unwrap();
    model.requests().last().unwrap()["messages"][0]["content"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_crate_folder_plugin_is_rebuilt_and_serves_the_next_call() {
    let source = author_crate();
    let model = FakeModel::start().await;
    let block = format!("[[plugin]]\npath = \"{}\"\n", source.path().display());
    let test = TestHost::new(&config_text(&model.url(), &block)).await.expect("the crate builds and loads");
    let _watcher = agent_host::reload::watch(test.host.clone(), test.events.clone()).unwrap();
    let session = test.session();
    assert!(system_prompt(&test, &model, &session).await.contains("You are triaging. Work out"));

    edit(source.path(), "stages.rs", "You are triaging.", "You are triaging, freshly rebuilt.");
    let events =
        events_until(&test, |e| matches!(e, Event::PluginLoaded { .. } | Event::PluginRejected { .. })).await;
    let progress: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::PluginBuilding { progress, .. } => Some(progress.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        progress.iter().any(|line| line.starts_with("Compiling triage-modes-live v0.1.0")),
        "the rebuild shows its progress: {events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::PluginLoaded { plugin, .. } if plugin == "triage-modes@0.1.0")),
        "{events:?}"
    );
    assert!(system_prompt(&test, &model, &session).await.contains("You are triaging, freshly rebuilt."));

    // A save in the middle of an edit: the compiler refuses it, the last good build serves on.
    edit(source.path(), "lib.rs", "impl Plugin for TriageModes {", "impl Plugin for TriageModes {{");
    let events = events_until(&test, |e| matches!(e, Event::PluginRejected { .. })).await;
    let error = events
        .iter()
        .find_map(|e| match e {
            Event::PluginRejected { error, .. } => Some(error.clone()),
            _ => None,
        })
        .unwrap();
    let canonical = std::fs::canonicalize(source.path()).unwrap();
    assert!(error.contains(&format!("plugin at {}", canonical.display())), "names the plugin: {error}");
    assert!(error.contains("src/lib.rs") && error.contains("error"), "the compiler's message: {error}");
    assert!(error.contains("could not compile `triage-modes-live`"), "{error}");
    assert_eq!(test.host.reload_status().error.as_deref(), Some(error.as_str()));
    assert!(system_prompt(&test, &model, &session).await.contains("You are triaging, freshly rebuilt."));
}
