//! Path rules on the path the fs plugin will really touch: a deny on `.env` holds however
//! the path is spelled, and the walking tools (`grep`, `glob`, `list_dir`), which take no
//! path, never show the denied file.

use serde_json::json;

use super::{call, refused};
use crate::support::{FakeModel, TestHost, plugin_block};

/// fs on a workspace holding `.env` (a secret) and `notes.txt`, with permissions denying
/// `read_file` on `.env` and allowing the rest.
async fn host() -> (TestHost, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join(".env"), "API_KEY=sk-secret-one\n").unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "see the key one in .env\n").unwrap();
    std::fs::create_dir(workspace.path().join("a")).unwrap();
    let plugins = format!(
        "{}{}",
        plugin_block(
            "fs",
            &format!(
                "[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}",
                workspace.path().display()
            )
        ),
        plugin_block(
            "permissions",
            "[plugin.config]\npreset = \"trust\"\nrules = [{ tool = \"read_file\", args = { path = \".env\" }, decision = \"deny\", reason = \"secrets stay put\" }]"
        )
    );
    (TestHost::with_plugins(&FakeModel::start().await, &plugins).await, workspace)
}

#[tokio::test]
async fn a_deny_on_a_path_holds_for_every_spelling_of_it() {
    let (test, _workspace) = host().await;
    let session = test.session();
    for spelling in [".env", "./.env", "/workspace/.env", " .env", ".env ", "a/../.env", ".//.env"] {
        let result = call(&test, &session, "read_file", json!({ "path": spelling })).await;
        assert!(
            refused(&result) && result.output.contains("secrets stay put"),
            "{spelling:?} got through: {}",
            result.output
        );
        assert!(!result.output.contains("sk-secret"), "{spelling:?}: {}", result.output);
    }
    let notes = call(&test, &session, "read_file", json!({ "path": "./notes.txt" })).await;
    assert!(notes.ok, "{}", notes.output);
}

#[tokio::test]
async fn grep_glob_and_list_dir_leave_the_denied_file_out() {
    let (test, _workspace) = host().await;
    let session = test.session();
    let grep = call(&test, &session, "grep", json!({ "text": "one" })).await;
    assert!(grep.ok, "{}", grep.output);
    assert!(grep.output.contains("notes.txt:1:"), "{}", grep.output);
    assert!(!grep.output.contains("sk-secret"), "grep read the denied file: {}", grep.output);
    assert!(grep.output.contains("left out by path rules: .env"), "{}", grep.output);
    // The model cannot ask for the file by the walk's own filter either.
    let narrowed = call(&test, &session, "grep", json!({ "text": "API_KEY", "glob": ".env" })).await;
    assert!(!narrowed.output.contains("sk-secret"), "{}", narrowed.output);

    let glob = call(&test, &session, "glob", json!({ "pattern": "*" })).await;
    assert!(glob.ok, "{}", glob.output);
    assert!(glob.output.contains("notes.txt") && !glob.output.contains(".env\n"), "{}", glob.output);
    assert!(!glob.output.lines().any(|l| l == ".env"), "glob showed the denied file: {}", glob.output);

    let list = call(&test, &session, "list_dir", json!({ "path": "/workspace" })).await;
    assert!(list.ok, "{}", list.output);
    assert!(!list.output.lines().any(|l| l == ".env"), "list_dir showed the denied file: {}", list.output);
}

/// A symlink inside the workspace that leads to the denied file: its name matches no rule,
/// but the file it reaches does, so fs refuses it.
#[tokio::test]
async fn a_symlink_to_the_denied_file_is_refused() {
    let (test, workspace) = host().await;
    std::os::unix::fs::symlink(".env", workspace.path().join("harmless.txt")).unwrap();
    std::os::unix::fs::symlink("../.env", workspace.path().join("a/deeper")).unwrap();
    let session = test.session();
    for path in ["harmless.txt", "a/deeper", "./a/deeper"] {
        let result = call(&test, &session, "read_file", json!({ "path": path })).await;
        assert!(
            !result.ok && result.output.contains("left out by the path rules"),
            "{path}: {}",
            result.output
        );
        assert!(!result.output.contains("sk-secret"), "{path}: {}", result.output);
    }
    let notes = call(&test, &session, "read_file", json!({ "path": "notes.txt" })).await;
    assert!(notes.ok, "{}", notes.output);
}

/// Another plugin's tool of the same name (misbehave's `read_file`, which takes `target`)
/// runs with the arguments it was given: an `exclude` it does not know would fail a strict
/// schema.
#[tokio::test]
async fn a_same_named_tool_of_another_plugin_is_not_rewritten() {
    let plugins = format!(
        "{}{}",
        plugin_block("misbehave", ""),
        plugin_block(
            "permissions",
            "[plugin.config]\npreset = \"trust\"\nrules = [{ tool = \"read_file\", args = { path = \".env\" }, decision = \"deny\" }]"
        )
    );
    let test = TestHost::with_plugins(&FakeModel::start().await, &plugins).await;
    let result = call(&test, &test.session(), "read_file", json!({ "target": "/etc/hostname" })).await;
    assert!(!result.output.contains("rewrote the arguments"), "{}", result.output);
    let ran_with = test
        .take_events()
        .into_iter()
        .find_map(|e| match e {
            agent_host::Event::ToolCall { name, arguments, .. } if name == "read_file" => Some(arguments),
            _ => None,
        })
        .expect("the call ran");
    assert_eq!(ran_with, json!({ "target": "/etc/hostname" }));
}
