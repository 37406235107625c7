//! A plugin given as a crate folder, edited while the host runs: the watcher rebuilds it
//! with cargo's progress shown, and the next model call is served by the new build; an edit
//! that does not compile is rejected with the compiler's message and the old build serves on.
//! A Python folder the same way, under a running session that keeps its state.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_host::Event;

use crate::support::{FakeModel, Reply, TestHost, config_text, repo_root};

/// A copy of `plugins/triage-modes` laid out as an author's own crate named `package`: the
/// SDK by absolute path, the plugins workspace's lock file, release profile and toolchain,
/// and its target folder shared with `plugins/target`, so the SDK and its dependencies are
/// already built and only the copy compiles. Each test names its copy differently: crates
/// of one name in one target folder build to one file.
pub(crate) fn author_crate(package: &str) -> tempfile::TempDir {
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
        "[package]\nname = \"{package}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [lib]\ncrate-type = [\"cdylib\"]\n\n{}\n[workspace]\n\n{}",
        toml::to_string(&toml::Table::from_iter([(
            "dependencies".to_owned(),
            author_dependencies(&workspace).into()
        )]))
        .unwrap(),
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

/// triage-modes' own dependencies as an author's crate states them: each `workspace = true`
/// taken from the plugins workspace, and a path (the SDK) made absolute.
fn author_dependencies(workspace: &toml::Table) -> toml::Table {
    let root = repo_root();
    let own: toml::Table =
        toml::from_str(&std::fs::read_to_string(root.join("plugins/triage-modes/Cargo.toml")).unwrap())
            .unwrap();
    let shared = workspace["workspace"]["dependencies"].as_table().unwrap();
    own["dependencies"]
        .as_table()
        .unwrap()
        .iter()
        .map(|(name, own_spec)| {
            let from_workspace = own_spec.get("workspace").and_then(|w| w.as_bool()) == Some(true);
            let mut spec = if from_workspace { shared[name].clone() } else { own_spec.clone() };
            if let Some(path) = spec.get("path").and_then(|path| path.as_str()) {
                let absolute = root.join("plugins").join(path).display().to_string();
                spec.as_table_mut().unwrap().insert("path".into(), absolute.into());
            }
            (name.clone(), spec)
        })
        .collect()
}

/// Edits one source file of the crate as an editor would: read, change, save.
fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    edit_file(&dir.join("src").join(file), from, to);
}

/// Replaces the first `from` in the file at `path` with `to`.
fn edit_file(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no `{from}`", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
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

/// The error of the next reload that was rejected.
async fn next_rejection(test: &TestHost) -> String {
    let events = events_until(test, |e| matches!(e, Event::PluginRejected { .. })).await;
    events
        .into_iter()
        .find_map(|e| match e {
            Event::PluginRejected { error, .. } => Some(error),
            _ => None,
        })
        .expect("a rejection")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_crate_folder_plugin_is_rebuilt_and_serves_the_next_call() {
    let source = author_crate("triage-modes-edited");
    let model = FakeModel::start().await;
    let block = format!("[[plugin]]\npath = \"{}\"\n", source.path().display());
    let test = TestHost::new(&config_text(&model.url(), &block)).await.expect("the crate builds and loads");
    let _watcher = agent_host::reload::watch(test.host.clone(), test.events.clone()).unwrap();
    let session = test.session();
    assert!(
        test.system_prompt_of_a_turn(&model, &session, "the build is red")
            .await
            .contains("You are triaging. Work out")
    );

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
        progress.iter().any(|line| line.starts_with("Compiling triage-modes-edited v0.1.0")),
        "the rebuild shows its progress: {events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::PluginLoaded { plugin, .. } if plugin == "triage-modes@0.1.0")),
        "{events:?}"
    );
    assert!(
        test.system_prompt_of_a_turn(&model, &session, "the build is red")
            .await
            .contains("You are triaging, freshly rebuilt.")
    );

    // A save in the middle of an edit: the compiler refuses it, the last good build serves on.
    edit(
        source.path(),
        "lib.rs",
        "pub fn plugin() -> Plugin<NoConfig> {",
        "pub fn plugin() -> Plugin<NoConfig> {{",
    );
    let error = next_rejection(&test).await;
    let canonical = std::fs::canonicalize(source.path()).unwrap();
    assert!(error.contains(&format!("plugin at {}", canonical.display())), "names the plugin: {error}");
    assert!(error.contains("src/lib.rs") && error.contains("error"), "the compiler's message: {error}");
    assert!(error.contains("could not compile `triage-modes-edited`"), "{error}");
    assert_eq!(test.host.reload_status().error.as_deref(), Some(error.as_str()));
    assert!(
        test.system_prompt_of_a_turn(&model, &session, "the build is red")
            .await
            .contains("You are triaging, freshly rebuilt.")
    );
}

/// The console's stdout, read as it comes (the prompt has no newline to wait for).
struct Output(Arc<Mutex<String>>);

impl Output {
    fn of(stdout: impl Read + Send + 'static) -> Self {
        let seen = Arc::new(Mutex::new(String::new()));
        let sink = seen.clone();
        std::thread::spawn(move || {
            let mut stdout = stdout;
            let mut buffer = [0u8; 4096];
            while let Ok(read @ 1..) = stdout.read(&mut buffer) {
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..read]));
            }
        });
        Self(seen)
    }

    fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }

    /// Waits until the output holds `needle` `times` times. The deadline only guards against a hang.
    async fn wait_for(&self, needle: &str, times: usize) {
        let deadline = Instant::now() + Duration::from_secs(300);
        while self.text().matches(needle).count() < times {
            assert!(Instant::now() < deadline, "no `{needle}` in the console:\n{}", self.text());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_running_console_shows_the_rebuild_and_answers_with_the_edited_plugin() {
    let source = author_crate("triage-modes-console");
    let model = FakeModel::start().await;
    model.push(Reply::text("Triaged.")).push(Reply::text("Triaged again."));
    let dir = tempfile::tempdir().unwrap();
    let block = format!("[[plugin]]\npath = \"{}\"\n", source.path().display());
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), &block)).unwrap();
    let mut console = Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = console.stdin.take().unwrap();
    let output = Output::of(console.stdout.take().unwrap());

    input.write_all(b"the build is red\n").unwrap();
    output.wait_for("Triaged.", 1).await;
    edit(source.path(), "stages.rs", "You are triaging.", "You are triaging, saved in the editor.");
    output.wait_for("plugin triage-modes@0.1.0 loaded", 1).await;
    input.write_all(b"still red\n").unwrap();
    output.wait_for("Triaged again.", 1).await;
    drop(input);
    assert!(console.wait().unwrap().success());

    let text = output.text();
    let building = text.find("Compiling triage-modes-console v0.1.0").expect("the console shows the build");
    assert!(building < text.find("plugin triage-modes@0.1.0 loaded").unwrap(), "{text}");
    assert_eq!(text.matches("plugin triage-modes@0.1.0 loaded").count(), 1, "one save, one swap: {text}");
    let requests = model.requests();
    let prompt = |i: usize| requests[i]["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(prompt(0).contains("You are triaging. Work out"), "{}", prompt(0));
    assert!(prompt(1).contains("You are triaging, saved in the editor."), "{}", prompt(1));
}

/// A copy of `plugins/triage-modes-py`: a Python plugin folder as an author has it.
fn author_python_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in ["pyproject.toml", "plugin.py", "stages.py"] {
        std::fs::copy(repo_root().join("plugins/triage-modes-py").join(file), dir.path().join(file)).unwrap();
    }
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_python_plugin_is_rebuilt_under_a_running_session_which_keeps_its_state() {
    let source = author_python_folder();
    let model = FakeModel::start().await;
    let block = format!("[[plugin]]\npath = \"{}\"\n", source.path().display());
    let test = TestHost::new(&config_text(&model.url(), &block)).await.expect("the folder builds and loads");
    let _watcher = agent_host::reload::watch(test.host.clone(), test.events.clone()).unwrap();
    let session = test.session();
    model.push(Reply::tool("advance_stage", r#"{"to":"research"}"#));
    model.push(Reply::text("researching"));
    test.turn(&session, "the build is red").await.unwrap();
    test.take_events();

    // Words no earlier run has built: a machine keeps the builds of folders it has seen, and this
    // test is about a real rebuild.
    let rebuilt = format!("You are researching, freshly rebuilt as {}.", source.path().display());
    edit_file(&source.path().join("stages.py"), "You are researching.", &rebuilt);
    let events =
        events_until(&test, |e| matches!(e, Event::PluginLoaded { .. } | Event::PluginRejected { .. })).await;
    assert!(
        events.iter().any(|e| matches!(e, Event::PluginBuilding { progress, .. }
            if progress.contains("triage-modes (Python)"))),
        "the rebuild shows its progress: {events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::PluginLoaded { plugin, .. } if plugin == "triage-modes@0.1.0")),
        "{events:?}"
    );
    // The session is still in `research`: its state lives in the host, not in the plugin.
    let prompt = test.system_prompt_of_a_turn(&model, &session, "go on").await;
    assert!(prompt.contains(&rebuilt), "{prompt}");

    // A save in the middle of an edit: Python refuses it, the last good build serves on.
    edit_file(&source.path().join("plugin.py"), "def current_stage() -> int:", "def current_stage() -> int");
    let error = next_rejection(&test).await;
    assert!(error.contains("its Python does not compile") && error.contains("SyntaxError"), "{error}");
    assert!(error.contains("plugin.py"), "names the file: {error}");
    let prompt = test.system_prompt_of_a_turn(&model, &session, "go on").await;
    assert!(prompt.contains(&rebuilt), "{prompt}");
}

/// A Python folder with `plugin.py` as given and `[project] dependencies`.
fn python_folder_with(dependencies: &str, plugin: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        format!("[project]\nname = \"with-deps\"\nversion = \"0.1.0\"\ndependencies = [{dependencies}]\n"),
    )
    .unwrap();
    std::fs::write(dir.path().join("plugin.py"), plugin).unwrap();
    dir
}

#[tokio::test]
async fn a_python_plugins_pure_python_dependencies_are_installed_into_its_build() {
    let source = python_folder_with(
        "\"six==1.16.0\"",
        "import six\nfrom agent_host_sdk import Plugin\n\nplugin = Plugin(\"with-deps\", \"0.1.0\")\n\n\
         @plugin.tool(\"six_version\", \"Says which six it carries.\")\n\
         def six_version(ctx) -> str:\n    return f\"six {six.__version__}\"\n",
    );
    let model = FakeModel::start().await;
    let block = format!("[[plugin]]\npath = \"{}\"\n", source.path().display());
    let test = TestHost::new(&config_text(&model.url(), &block)).await.expect("the folder builds and loads");
    let session = test.session();
    let mut locked = session.lock().await;
    let result = test
        .host
        .invoke_tool(&mut locked, "six_version", &serde_json::json!({}), &*test.events)
        .await
        .unwrap();
    assert!(result.ok && result.output == "six 1.16.0", "{result:?}");

    // A package with no pure-Python wheel cannot run in the component: pip refuses it, named.
    let native = python_folder_with(
        "\"numpy==2.1.0\"",
        "from agent_host_sdk import Plugin\nplugin = Plugin(\"with-deps\", \"0.1.0\")\n",
    );
    let block = format!("[[plugin]]\npath = \"{}\"\n", native.path().display());
    let error = TestHost::new(&config_text(&model.url(), &block)).await.err().expect("the build fails");
    let error = format!("{error:#}");
    assert!(error.contains("pip (the plugin's dependencies) failed") && error.contains("numpy"), "{error}");
}

/// What building `folder` reported, and the component it gave.
fn built_with_progress(folder: &Path) -> (Vec<String>, std::path::PathBuf) {
    let lines = Mutex::new(Vec::new());
    let sandbox = agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox");
    let component = agent_host::plugins::resolve_component(folder, &sandbox, &|line| {
        lines.lock().unwrap().push(line.to_owned());
    })
    .unwrap_or_else(|error| panic!("{} builds: {error}", folder.display()));
    (lines.into_inner().unwrap(), component)
}

#[test]
fn a_folder_like_one_built_before_on_this_machine_takes_its_build() {
    // Files no folder had before this run: the first build is a real one.
    let nonce = format!("# built for this run only: {:?}\n", Instant::now());
    let (first, second) = (author_python_folder(), author_python_folder());
    for folder in [&first, &second] {
        let plugin = folder.path().join("plugin.py");
        let text = std::fs::read_to_string(&plugin).unwrap();
        std::fs::write(&plugin, format!("{nonce}{text}")).unwrap();
    }
    let (built, component) = built_with_progress(first.path());
    assert!(built.iter().any(|line| line.contains("with componentize-py")), "{built:?}");
    let (reused, copy) = built_with_progress(second.path());
    assert!(!reused.iter().any(|line| line.contains("componentize-py")), "no second build: {reused:?}");
    assert!(reused.iter().any(|line| line.contains("its component is reused")), "{reused:?}");
    assert!(copy.starts_with(second.path()), "the copy's own build folder: {}", copy.display());
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&component).unwrap());
    // An edit is a folder no build had: it builds.
    edit_file(&second.path().join("stages.py"), "You are researching.", "You are researching, edited.");
    let (rebuilt, _) = built_with_progress(second.path());
    assert!(rebuilt.iter().any(|line| line.contains("with componentize-py")), "{rebuilt:?}");
}
