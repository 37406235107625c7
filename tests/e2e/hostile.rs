//! A plugin that tries what it must not: reach another session, read a host file, open a
//! socket, read the environment; and a plugin whose component file is deleted while the
//! host is using it. Each refusal is paired with a control that shows the attempt was real.

use std::collections::BTreeMap;

use agent_host::Event;
use agent_host::agent::SessionHandle;
use agent_host::state::{SessionStore, SqliteStore};
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, plugin_block, plugin_wasm};

async fn call(test: &TestHost, session: &SessionHandle, tool: &str, args: Value) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.expect("the call runs")
}

/// The results of the tool calls in the events collected so far, by tool name, in order.
fn tool_results(test: &TestHost) -> Vec<(String, String)> {
    test.take_events()
        .into_iter()
        .filter_map(|event| match event {
            Event::ToolResult { name, output, .. } => Some((name, output)),
            _ => None,
        })
        .collect()
}

/// The misbehave plugin's `memory` in a session as committed to SQLite.
fn stored_memory(test: &TestHost, id: &str) -> BTreeMap<String, Value> {
    let stored =
        SqliteStore::open(&test.db_path()).unwrap().load(id).unwrap().expect("the session is stored");
    stored
        .state
        .iter()
        .find(|(namespace, key, _)| namespace == "misbehave" && key == "memory")
        .map(|(_, _, json)| serde_json::from_str(json).unwrap())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_plugin_cannot_reach_another_session() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("misbehave", "")).await;
    let (a, b) = (test.session(), test.session());
    let a_id = a.lock().await.id().to_owned();
    let b_id = b.lock().await.id().to_owned();

    model.push(Reply::tool("remember", r#"{"key":"secret","value":"only in A"}"#)).push(Reply::text("ok"));
    test.turn(&a, "remember a secret").await.unwrap();
    test.take_events();

    // In session B the plugin learns A's id (the model hands it over) and does everything
    // the contract lets it do with it: write under it, read its own state.
    let write_as_a = json!({"key": a_id, "value": "written from B"}).to_string();
    model
        .push(Reply::tool("whoami", "{}").and_tool("remember", &write_as_a).and_tool("recall", "{}"))
        .push(Reply::text("ok"));
    test.turn(&b, "try to reach session A").await.unwrap();
    let in_b = tool_results(&test);
    assert_eq!(in_b[0], ("whoami".to_owned(), b_id.clone()), "the host names the session: {in_b:?}");
    assert_eq!(
        in_b[2].1,
        json!({ &a_id: "written from B" }).to_string(),
        "A's secret is not visible: {in_b:?}"
    );

    model.push(Reply::tool("whoami", "{}").and_tool("recall", "{}")).push(Reply::text("ok"));
    test.turn(&a, "what do you remember?").await.unwrap();
    let in_a = tool_results(&test);
    assert_eq!(in_a[0].1, a_id);
    assert_eq!(
        in_a[1].1,
        json!({"secret": "only in A"}).to_string(),
        "B's write did not land in A: {in_a:?}"
    );

    assert_eq!(stored_memory(&test, &a_id), BTreeMap::from([("secret".to_owned(), json!("only in A"))]));
    assert_eq!(stored_memory(&test, &b_id), BTreeMap::from([(a_id.clone(), json!("written from B"))]));
}

#[tokio::test]
async fn a_plugin_cannot_read_host_files_without_a_grant() {
    let model = FakeModel::start().await;
    let granted = tempfile::tempdir().unwrap();
    std::fs::write(granted.path().join("note.txt"), "granted text").unwrap();
    let grant = format!("[plugin.grants.dirs]\n\"/data\" = {{ host = \"{}\" }}\n", granted.path().display());
    let test = TestHost::with_plugins(&model, &plugin_block("misbehave", &grant)).await;
    let session = test.session();

    // Control: the tool reads what is granted, so the refusals below are the sandbox's.
    let read = call(&test, &session, "read_file", json!({"target": "/data/note.txt"})).await;
    assert!(read.ok && read.output == "granted text", "{}", read.output);

    let config = test.dir.path().join("config.toml");
    let host_file = granted.path().join("note.txt");
    for target in [config.display().to_string(), host_file.display().to_string(), "/etc/passwd".into()] {
        let refused = call(&test, &session, "read_file", json!({ "target": target })).await;
        assert!(!refused.ok, "{target} was read: {}", refused.output);
        assert!(refused.output.starts_with(&format!("read {target}: ")), "{}", refused.output);
    }
    let escape = call(&test, &session, "read_file", json!({"target": "/data/../config.toml"})).await;
    assert!(!escape.ok, "{}", escape.output);
}

#[tokio::test]
async fn a_plugin_cannot_open_a_socket() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("misbehave", "")).await;
    let session = test.session();
    // A real listener on loopback: the connection would succeed from the host itself.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::net::TcpStream::connect(&address).expect("the host can connect");
    listener.accept().expect("the control connection arrives");

    let refused = call(&test, &session, "connect", json!({ "target": address })).await;
    assert!(!refused.ok, "{}", refused.output);
    assert!(refused.output.starts_with(&format!("connect {address}: ")), "{}", refused.output);
    // The host's WASI refused the address (no socket grant), rather than sockets being missing.
    assert!(refused.output.contains("Permission denied"), "{}", refused.output);
    listener.set_nonblocking(true).unwrap();
    let arrived = listener.accept();
    assert!(
        arrived.as_ref().is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
        "the plugin's connection reached the listener: {arrived:?}"
    );
}

#[tokio::test]
async fn a_plugin_cannot_read_the_environment() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("misbehave", "")).await;
    let session = test.session();
    for variable in ["PATH", "HOME", "CARGO_MANIFEST_DIR"] {
        assert!(std::env::var_os(variable).is_some(), "the host has {variable}");
        let refused = call(&test, &session, "env", json!({ "target": variable })).await;
        assert!(!refused.ok, "{variable} reached the plugin: {}", refused.output);
        assert_eq!(refused.output, format!("env {variable}: environment variable not found"));
    }
}

#[tokio::test]
async fn a_component_deleted_while_in_use_keeps_serving_and_a_reload_names_the_file() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    let component = dir.path().join("misbehave-copy.wasm");
    std::fs::copy(plugin_wasm("misbehave"), &component).unwrap();
    let plugins = format!("[[plugin]]\npath = \"{}\"\n", component.display());
    let test = TestHost::new(&config_text(&model.url(), &plugins)).await.unwrap();
    let session = test.session();
    assert!(call(&test, &session, "remember", json!({"key": "before", "value": 1})).await.ok);

    std::fs::remove_file(&component).unwrap();
    let after = call(&test, &session, "remember", json!({"key": "after", "value": 2})).await;
    assert_eq!(after.output, "2 values remembered", "the loaded version keeps serving");
    model.push(Reply::tool("recall", "{}")).push(Reply::text("still here"));
    assert_eq!(test.turn(&session, "recall").await.unwrap().reply, "still here");

    test.take_events();
    let error = test.host.reload(&*test.events).await.expect_err("the reload fails").to_string();
    let named = component.display().to_string();
    assert!(error.contains(&named), "the error names the missing file: {error}");
    let rejected = test
        .take_events()
        .into_iter()
        .any(|e| matches!(e, Event::PluginRejected { error, .. } if error.contains(&named)));
    assert!(rejected, "a plugin_rejected event names the file");
    assert!(test.host.reload_status().error.is_some_and(|e| e.contains(&named)));

    let recall = call(&test, &test.session(), "recall", json!({})).await;
    assert!(recall.ok, "the old version serves new sessions too: {}", recall.output);
    let same = call(&test, &session, "recall", json!({})).await;
    assert_eq!(same.output, r#"{"after":2,"before":1}"#);
}
