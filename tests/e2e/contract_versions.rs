//! Contract versions: a component is called through the bindings of the contract line it
//! was built against. `contract-0-2-0` uses every addition of 0.2.0 (requirements from
//! `configure`, `status`, display forms, the cut time of a process); `contract-0-1-0` and
//! every stock plugin built against 0.1 load through the converter. `contract-0-2-3`, built
//! against the last contract before views, loads and runs on the 0.2.6 host and shows none.

use agent_host::Event;
use agent_host::agent::Views;
use agent_host::plugins::{Export, Exports};
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, json_prompt_command, plugin_block};

async fn load_error(plugins: &str) -> String {
    let model = FakeModel::start().await;
    TestHost::new(&config_text(&model.url(), plugins)).await.err().expect("the load fails").to_string()
}

#[tokio::test]
async fn each_plugin_is_called_through_the_line_it_was_built_against() {
    let model = FakeModel::start().await;
    let plugins = format!("{}{}", plugin_block("contract-0-1-0", ""), plugin_block("contract-0-2-0", ""));
    let test = TestHost::with_plugins(&model, &plugins).await;
    let set = test.host.plugins();
    assert_eq!(set.by_name("legacy").expect("loaded").contract(), "0.1");
    assert_eq!(set.by_name("contract-two").expect("loaded").contract(), "0.2");
}

#[tokio::test]
async fn status_gives_the_prompt_its_text_and_what_the_call_wrote_or_emitted_is_discarded() {
    let model = FakeModel::start().await;
    let plugins = format!(
        "{}{}",
        plugin_block("contract-0-1-0", ""),
        plugin_block("contract-0-2-0", "[plugin.config]\nstatus = \"ready\"\n")
    );
    let test = TestHost::with_plugins(&model, &plugins).await;
    let session = test.session();
    let mut locked = session.lock().await;
    assert_eq!(test.host.plugins().status(&locked).await, vec!["ready".to_owned()], "0.1 plugins have none");

    test.host.command(&mut locked, "/badge plan", &*test.events).await.expect("the command runs");
    assert_eq!(test.host.plugins().status(&locked).await, vec!["plan".to_owned()]);
    assert_eq!(test.host.plugins().status(&locked).await, vec!["plan".to_owned()]);
    assert_eq!(locked.bag().get("contract-two", "status-calls"), None, "status wrote to the session");
    let events = test.take_events();
    assert!(
        !events.iter().any(|e| matches!(e, Event::Plugin { kind, .. } if kind == "status-called")),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_plugin_without_status_leaves_the_prompt_bare() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("contract-0-2-0", "")).await;
    let session = test.session();
    let locked = session.lock().await;
    assert_eq!(test.host.plugins().status(&locked).await, Vec::<String>::new());
}

#[tokio::test]
async fn emitted_events_carry_their_display_form_or_none() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("contract_emit", "{}"));
    model.push(Reply::text("done"));
    let test = TestHost::with_plugins(&model, &plugin_block("contract-0-2-0", "")).await;
    let session = test.session();
    test.turn(&session, "emit").await.unwrap();
    let displays: Vec<(String, Option<String>)> = test
        .take_events()
        .into_iter()
        .filter_map(|event| match event {
            Event::Plugin { kind, display, .. } => Some((kind, display)),
            _ => None,
        })
        .collect();
    assert_eq!(
        displays,
        vec![
            ("contract-shown".to_owned(), Some("shown to people\nin two lines".to_owned())),
            ("contract-hidden".to_owned(), None),
        ]
    );
}

#[tokio::test]
async fn a_display_form_counts_toward_the_event_payload_cap() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(
        &model,
        &plugin_block("contract-0-2-0", "[plugin.limits]\nevent_payload_kb = 1\n"),
    )
    .await;
    let session = test.session();
    let mut locked = session.lock().await;
    let args = |display_bytes: u64| json!({"display_bytes": display_bytes});
    let small = test.host.invoke_tool(&mut locked, "contract_emit", &args(500), &*test.events).await.unwrap();
    assert!(small.ok, "{}", small.output);
    // The payload is a few bytes: only the display form can take the event over 1 KiB.
    let large =
        test.host.invoke_tool(&mut locked, "contract_emit", &args(2000), &*test.events).await.unwrap();
    assert!(!large.ok, "{}", large.output);
    assert!(large.output.contains("event_payload_kb"), "{}", large.output);
}

#[tokio::test]
async fn a_requirement_without_its_grant_is_a_load_error_naming_the_grant() {
    let plugins = format!(
        "{}{}",
        plugin_block("contract-0-2-0", "[plugin.config]\nreads = \"legacy\"\n"),
        plugin_block("contract-0-1-0", "")
    );
    let error = load_error(&plugins).await;
    assert!(error.contains("config.toml:"), "names the file and line: {error}");
    assert!(error.contains("contract-two@0.2.0 reads the state of `legacy`"), "{error}");
    assert!(error.contains("add `read_state = [\"legacy\"]` under its [plugin.grants]"), "{error}");

    let error = load_error(&plugin_block("contract-0-2-0", "[plugin.config]\nprocesses = true\n")).await;
    assert!(error.contains("add `process = true` under its [plugin.grants]"), "{error}");
    let error = load_error(&plugin_block("contract-0-2-0", "[plugin.config]\nnetwork = true\n")).await;
    assert!(error.contains("add `network = true` under its [plugin.grants]"), "{error}");
}

#[tokio::test]
async fn reading_the_state_of_a_plugin_that_is_not_loaded_is_a_load_error() {
    let error = load_error(&plugin_block(
        "contract-0-2-0",
        "[plugin.config]\nreads = \"absent\"\n[plugin.grants]\nread_state = [\"absent\"]\n",
    ))
    .await;
    assert!(error.contains("reads the state of `absent`, but no loaded plugin has that name"), "{error}");
}

#[tokio::test]
async fn a_granted_requirement_loads() {
    let model = FakeModel::start().await;
    let plugins = format!(
        "{}{}",
        plugin_block(
            "contract-0-2-0",
            "[plugin.config]\nreads = \"legacy\"\n[plugin.grants]\nread_state = [\"legacy\"]\n"
        ),
        plugin_block("contract-0-1-0", "")
    );
    let test = TestHost::with_plugins(&model, &plugins).await;
    assert_eq!(test.host.plugins().plugins().len(), 2);
}

#[tokio::test]
async fn a_stock_plugin_requirement_replaces_a_private_setting_check() {
    // Whatever a plugin reads is declared by the plugin, not guessed from its settings.
    let plugins = format!(
        "{}{}",
        plugin_block("contract-0-2-0", "[plugin.config]\nreads = \"agent-mode\"\n"),
        plugin_block("agent-mode", "")
    );
    let error = load_error(&plugins).await;
    assert!(error.contains("add `read_state = [\"agent-mode\"]` under its [plugin.grants]"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_2_process_cut_to_the_deadline_says_so_in_a_field_not_on_stderr() {
    let model = FakeModel::start().await;
    let workspace = tempfile::tempdir().unwrap();
    let block = format!(
        "[plugin.limits]\ntimeout_ms = 3000\n[plugin.grants]\nprocess = true\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}\n",
        workspace.path().display()
    );
    let test = TestHost::with_plugins(&model, &plugin_block("contract-0-2-0", &block)).await;
    let session = test.session();
    let mut locked = session.lock().await;
    let run = |command: &str, timeout_ms: u64| json!({"command": command, "timeout_ms": timeout_ms});

    let cut = test
        .host
        .invoke_tool(&mut locked, "contract_run", &run("sleep 10", 60_000), &*test.events)
        .await
        .unwrap();
    assert!(cut.ok, "{}", cut.output);
    let cut: Value = serde_json::from_str(&cut.output).unwrap();
    assert_eq!(cut["timed_out"], true, "{cut}");
    let given = cut["timeout_cut_to_ms"].as_u64().expect("the cut is reported");
    assert!(given > 0 && given < 3000, "{cut}");
    assert!(!cut["stderr"].as_str().unwrap().contains("agent-host:"), "no note for 0.2: {cut}");

    let whole = test
        .host
        .invoke_tool(&mut locked, "contract_run", &run("echo hi", 500), &*test.events)
        .await
        .unwrap();
    let whole: Value = serde_json::from_str(&whole.output).unwrap();
    assert_eq!(whole["stdout"], "hi\n", "{whole}");
    assert_eq!(whole["timeout_cut_to_ms"], Value::Null, "asked for less than the deadline left: {whole}");
}

/// `contract-0-2-3` (built against 0.2.3, before views) beside `todo`, built with the SDK
/// against 0.2.4, which exports the `viewer` interface.
fn before_views_beside_the_sdk() -> String {
    format!("{}{}", plugin_block("contract-0-2-3", ""), plugin_block("todo", ""))
}

#[tokio::test]
async fn a_0_2_3_plugin_loads_on_the_0_2_4_host_and_its_tool_and_status_work() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &before_views_beside_the_sdk()).await;
    let set = test.host.plugins();
    let three = set.by_name("contract-three").expect("loaded");
    assert_eq!(three.label(), "contract-three@0.2.3");
    assert_eq!(three.contract(), "0.2");
    let session = test.session();
    let mut locked = session.lock().await;
    assert_eq!(test.host.plugins().status(&locked).await, vec!["no note".to_owned()]);

    let noted = test
        .host
        .invoke_tool(&mut locked, "contract_note", &json!({"text": "ship it"}), &*test.events)
        .await
        .unwrap();
    assert!(noted.ok, "{}", noted.output);
    assert_eq!(noted.output, "noted: ship it");
    assert_eq!(locked.bag().get("contract-three", "note").as_deref(), Some("\"ship it\""));
    assert_eq!(test.host.plugins().status(&locked).await, vec!["ship it".to_owned()]);
}

#[tokio::test]
async fn a_0_2_3_plugin_shows_no_view_and_its_view_is_never_asked() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &before_views_beside_the_sdk()).await;
    let set = test.host.plugins();
    let (three, todo) = (set.by_name("contract-three").unwrap(), set.by_name("todo").unwrap());
    assert!(!three.implements(Exports::VIEW));
    // The SDK's plugin exports `viewer`, so the host asked it once at load whether it shows
    // a view; the 0.2.3 one has no such export to ask.
    assert_eq!(todo.calls().get(Export::ViewerShows), 1, "{}", todo.calls().summary());
    assert_eq!(three.calls().get(Export::ViewerShows), 0);

    let session = test.session();
    let mut locked = session.lock().await;
    let noted = test
        .host
        .invoke_tool(&mut locked, "contract_note", &json!({"text": "changed"}), &*test.events)
        .await
        .unwrap();
    assert!(noted.ok, "{}", noted.output);
    // Its state changed, so a refresh would ask it again if it had a view.
    let mut views = Views::default();
    views.refresh(&set, locked.id(), locked.bag(), &*test.events).await;
    views.refresh(&set, locked.id(), locked.bag(), &*test.events).await;
    assert_eq!(views.of("contract-three"), None);
    let events = test.take_events();
    assert!(
        !events.iter().any(|e| matches!(e, Event::ViewChanged { view } if view.plugin == "contract-three")),
        "{events:?}"
    );
    assert_eq!(three.calls().get(Export::View), 0, "{}", three.calls().summary());
}

#[tokio::test]
async fn a_0_2_3_plugin_runs_in_the_binary_and_its_json_stream_has_no_view_of_it() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), &before_views_beside_the_sdk()))
        .unwrap();
    model.push(Reply::tool("contract_note", r#"{"text":"from the model"}"#));
    model.push(Reply::text("done"));
    let output = json_prompt_command(dir.path(), None, "take a note")
        .env("AGENT_HOST_TEST_KEY", "sk-test")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let events: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}")))
        .collect();
    let result = events.iter().find(|event| event["type"] == "tool_result").expect("the tool ran");
    assert_eq!(result["output"], "noted: from the model", "{result}");
    let views_of_it: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "view_changed" && event["plugin"] == "contract-three")
        .collect();
    assert!(views_of_it.is_empty(), "{views_of_it:?}");
}

/// The TypeScript SDK's types of the contract (`plugins/sdk-typescript/wit/`) are what jco
/// generates from `wit/plugin.wit` now: a contract change that forgot them fails here.
#[test]
fn the_typescript_sdks_contract_types_are_generated_from_the_current_contract() {
    let root = crate::support::repo_root();
    let installed = std::process::Command::new("bash")
        .arg(root.join("scripts/install-plugin-toolchains.sh"))
        .arg("typescript")
        .output()
        .unwrap();
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));
    let home = agent_host::config::toolchains_home();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root.join("wit/plugin.wit"), dir.path().join("plugin.wit")).unwrap();
    let generated = std::process::Command::new(home.join("typescript/node_modules/.bin/jco"))
        .current_dir(dir.path())
        .args(["guest-types", "plugin.wit", "--world-name", "judging-plugin", "-o", "out", "-q"])
        .output()
        .unwrap();
    assert!(generated.status.success(), "{}", String::from_utf8_lossy(&generated.stderr));
    let relative = |dir: &std::path::Path| -> Vec<(std::path::PathBuf, String)> {
        let mut files: Vec<_> = crate::support::files_under(dir)
            .into_iter()
            .map(|(path, bytes)| {
                (path.strip_prefix(dir).unwrap().to_path_buf(), String::from_utf8(bytes).unwrap())
            })
            .collect();
        files.sort();
        files
    };
    let (generated, committed) =
        (relative(&dir.path().join("out")), relative(&root.join("plugins/sdk-typescript/wit")));
    let names =
        |files: &[(std::path::PathBuf, String)]| files.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&generated), names(&committed), "the same files");
    for ((file, now), (_, kept)) in generated.iter().zip(&committed) {
        assert!(now == kept, "{file:?} differs: regenerate them (plugins/sdk-typescript/README.md)");
    }
}
