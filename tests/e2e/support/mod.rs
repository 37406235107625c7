//! What every end-to-end test shares: plugins built once, a fake model server, a host in a
//! temporary folder with its own SQLite database.

pub mod acp_client;
pub mod anthropic_fake;
pub mod approver;
pub mod binary;
pub mod console;
pub mod fake_endpoint;
pub mod fake_model;
pub mod files;
pub mod judged;
pub mod mcp;
pub mod postgres;
pub mod pty;
pub mod registry;
pub mod serve;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use agent_host::agent::NoOperator;
use agent_host::agent::SessionHandle;
use agent_host::events::CollectEvents;
use agent_host::model::ModelClient;
use agent_host::{Config, Event, Host, TurnOutcome};

pub use approver::ScriptedApprover;
pub use binary::json_prompt_command;
pub use fake_model::{Check, FakeModel, Reply};
pub use files::{contains, files_under};

/// The repository's root folder.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cli/ sits in the repository").to_path_buf()
}

/// Every plugin crate under `plugins/`, built once per test process for wasm32-wasip2.
pub fn plugin_wasm(package: &str) -> PathBuf {
    static BUILT: OnceLock<BTreeMap<String, PathBuf>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let built = agent_host::plugins::build_workspace(
            &repo_root().join("plugins"),
            &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
        )
        .unwrap_or_else(|error| panic!("building the plugins failed: {error}"));
        settled(built)
    });
    built.get(package).unwrap_or_else(|| panic!("no plugin package `{package}` in plugins/")).clone()
}

/// The plugin folder `plugins/FOLDER` in Python or TypeScript (`triage-modes-py`), built once
/// per test process by the host's own build (which installs the pinned toolchain when it is
/// missing), its component settled like the crates'.
pub fn source_plugin_wasm(folder: &str) -> PathBuf {
    built_source(folder, &repo_root().join("plugins").join(folder))
}

/// The TypeScript folder `plugins/FOLDER` built on the QuickJS engine: a copy under
/// `target/e2e-sources/` whose package.json asks for it, built by the host.
pub fn quickjs_plugin_wasm(folder: &str) -> PathBuf {
    let copy = repo_root().join("target").join("e2e-sources").join(format!("{folder}-quickjs"));
    let source = repo_root().join("plugins").join(folder);
    std::fs::create_dir_all(&copy).expect("create the copy's folder");
    for entry in std::fs::read_dir(&source).expect("the folder") {
        let path = entry.expect("an entry").path();
        if path.is_file() {
            std::fs::copy(&path, copy.join(path.file_name().expect("a name"))).expect("copy a source file");
        }
    }
    let manifest = copy.join("package.json");
    let mut package: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).expect("package.json")).expect("JSON");
    package["agent-host"] = serde_json::json!({ "engine": "quickjs" });
    std::fs::write(&manifest, package.to_string()).expect("write package.json");
    built_source(&format!("{folder}-quickjs"), &copy)
}

fn built_source(name: &str, folder: &Path) -> PathBuf {
    static BUILT: std::sync::Mutex<BTreeMap<String, PathBuf>> = std::sync::Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(path) = built.get(name) {
        return path.clone();
    }
    let component = agent_host::plugins::resolve_component(
        folder,
        &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
        &|_| {},
    )
    .unwrap_or_else(|error| panic!("building {} failed: {error}", folder.display()));
    let settled = settle(&component, &format!("{}.wasm", name.replace('/', "-")));
    built.insert(name.to_owned(), settled.clone());
    settled
}

/// The built components copied out of cargo's target folder, which is not theirs to keep: a
/// test that runs the binary on a plugin's crate folder (the shipped config does) builds that
/// one package, and cargo may write its `.wasm` anew under a test that hashed the old one.
fn settled(built: BTreeMap<String, PathBuf>) -> BTreeMap<String, PathBuf> {
    built
        .into_iter()
        .map(|(package, path)| {
            let copy = settle(&path, path.file_name().expect("a component file").to_str().expect("UTF-8"));
            (package, copy)
        })
        .collect()
}

/// `component` copied to `target/e2e-plugins/NAME`.
fn settle(component: &Path, name: &str) -> PathBuf {
    let folder = repo_root().join("target").join("e2e-plugins");
    std::fs::create_dir_all(&folder).expect("create target/e2e-plugins");
    let copy = folder.join(name);
    // Through a rename, so a test process running beside this one never reads half a copy.
    let temp = tempfile::NamedTempFile::new_in(&folder).expect("a temporary file");
    std::fs::copy(component, temp.path()).expect("copy a built component");
    temp.persist(&copy).expect("move the copy into place");
    copy
}

/// Every tool result of `events`: (ok, output).
pub fn tool_results(events: &[Event]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
            _ => None,
        })
        .collect()
}

/// A host in a temporary folder: `config.toml` written from the text given, SQLite inside.
pub struct TestHost {
    pub dir: tempfile::TempDir,
    pub host: Arc<Host>,
    pub events: Arc<CollectEvents>,
}

/// Config text for a deployment pointing at `model_url` with the given `[[plugin]]` blocks.
pub fn config_text(model_url: &str, plugins: &str) -> String {
    format!(
        "[agent]\nmax_iterations = 6\n\n[model]\nbase_url = \"{model_url}\"\nmodel = \"fake\"\napi_key_env = \"AGENT_HOST_TEST_KEY\"\nmax_retries = 2\nretry_backoff_ms = 10\ntimeout_secs = 5\n\n[storage]\npath = \"sessions.db\"\n\n[runtime]\ncache_dir = \"{}\"\n\n{plugins}",
        shared_cache_dir().display()
    )
}

/// `permissions` `[plugin.config]` lines that put every `touch` to the operator (a child
/// agent's too) and allow the rest.
pub const ASK_ABOUT_TOUCH: &str = "[plugin.config]\ndefault = \"allow\"\nrules = [{ tool = \"touch\", decision = \"ask\", reason = \"touching needs a look\" }]";

/// Debian's Chromium and playwright-core, installed when missing (a test never skips).
pub fn install_browser() {
    let installed = std::process::Command::new("bash")
        .arg(repo_root().join("scripts/install-browser.sh"))
        .status()
        .expect("bash runs the install script");
    assert!(installed.success(), "installing the browser failed");
}

/// One compile cache for the whole test run, so each component is compiled once.
pub fn shared_cache_dir() -> PathBuf {
    repo_root().join("target").join("test-compile-cache")
}

/// A `[[plugin]]` block for a built plugin package, with extra TOML lines appended.
pub fn plugin_block(package: &str, extra: &str) -> String {
    format!("[[plugin]]\npath = \"{}\"\n{extra}\n", plugin_wasm(package).display())
}

/// `misbehave`'s `remember` tool, refused by a `permissions` rule: a call every front end
/// must show refused, with its tool and arguments.
pub fn refusing_plugins() -> String {
    format!(
        "{}{}",
        plugin_block("misbehave", ""),
        plugin_block(
            "permissions",
            "[plugin.config]\nrules = [{ tool = \"remember\", decision = \"deny\", reason = \"not today\" }]"
        )
    )
}

/// A `[[plugin]]` block for the Python or TypeScript plugin folder `plugins/FOLDER`, built.
pub fn source_plugin_block(folder: &str, extra: &str) -> String {
    component_block(&source_plugin_wasm(folder), extra)
}

/// A `[[plugin]]` block for a built component.
pub fn component_block(component: &Path, extra: &str) -> String {
    format!("[[plugin]]\npath = \"{}\"\n{extra}\n", component.display())
}

/// The grant of `folder` as the plugin's writable `/workspace`, as `[plugin.grants.dirs]`.
pub fn writable_workspace(folder: &std::path::Path) -> String {
    format!("[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}", folder.display())
}

impl TestHost {
    pub async fn new(config: &str) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("config.toml");
        std::fs::write(&path, config)?;
        let config = Config::load(&path)?;
        let model = ModelClient::from_config(&config)?.expect("test configs name a model");
        let host = Arc::new(Host::new(config, model).await?);
        Ok(Self { dir, host, events: Arc::new(CollectEvents::default()) })
    }

    pub async fn with_plugins(model: &FakeModel, plugins: &str) -> Self {
        Self::new(&config_text(&model.url(), plugins)).await.expect("the test host starts")
    }

    pub fn session(&self) -> SessionHandle {
        self.host.sessions().create().expect("a session")
    }

    /// Runs one turn on `session` with no operator to ask.
    pub async fn turn(&self, session: &SessionHandle, prompt: &str) -> anyhow::Result<TurnOutcome> {
        let mut session = session.lock().await;
        Ok(self.host.run_turn(&mut session, prompt, &*self.events, &NoOperator).await?)
    }

    /// Runs one turn the model answers with "ok" and returns the system prompt it was sent.
    pub async fn system_prompt_of_a_turn(
        &self,
        model: &FakeModel,
        session: &SessionHandle,
        prompt: &str,
    ) -> String {
        model.push(Reply::text("ok"));
        self.turn(session, prompt).await.unwrap();
        system_prompt(model.requests().last().unwrap()).to_owned()
    }

    pub fn take_events(&self) -> Vec<Event> {
        self.events.take()
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("sessions.db")
    }
}

/// Runs the real binary as a console session (stdin piped, no colours) against a scripted
/// model with `script` (model turns) and `plugins` (`[[plugin]]` blocks); returns stdout.
pub fn scripted_console(script: &str, plugins: &str, input: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.toml"), script).unwrap();
    let config = format!(
        "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n\n[storage]\npath = \"s.db\"\n\n[runtime]\ncache_dir = \"{}\"\n\n{plugins}",
        shared_cache_dir().display(),
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .env_remove("OPENAI_API_KEY")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The paragraphs (the parts between blank lines) of every message one request carried, in
/// order. Plugins' injected messages ride on the user's turn as paragraphs after its own
/// text (`[model] injected_as = "user"`, the default), so a test looking for one looks here.
pub fn paragraphs(request: &serde_json::Value) -> Vec<&str> {
    let messages = request["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    messages.iter().filter_map(|m| m["content"].as_str()).flat_map(|content| content.split("\n\n")).collect()
}

/// Runs the real binary as a console session on the deployment `config` (stdin piped, no
/// colours), resuming `session` when given, with `input` typed; returns stdout. Async, so
/// that a fake model on the test's runtime can answer meanwhile.
pub async fn console_on(config: &Path, session: Option<&str>, input: &str) -> String {
    use std::process::Stdio;
    use tokio::io::AsyncWriteExt;

    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command
        .arg("--config")
        .arg(config)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(id) = session {
        command.args(["--session", id]);
    }
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The system prompt of one request the fake model received.
pub fn system_prompt(request: &serde_json::Value) -> &str {
    request["messages"][0]["content"].as_str().expect("every request starts with the system prompt")
}

/// The last user message of one request the fake model received, as JSON text ("" if none).
pub fn last_user_text(request: &serde_json::Value) -> String {
    let messages = request["messages"].as_array().expect("a chat request has messages");
    messages.iter().rev().find(|m| m["role"] == "user").map(|m| m["content"].to_string()).unwrap_or_default()
}

/// The `[plugin.grants.dirs]` block that lets the permissions plugin write its audit log to
/// `host` (as `/audit`).
pub fn audit_grant(host: &std::path::Path) -> String {
    format!("[plugin.grants.dirs]\n\"/audit\" = {{ host = \"{}\", write = true }}", host.display())
}
