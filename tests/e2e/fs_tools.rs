//! The `fs` plugin through the real host, on a real temporary workspace: reading with line
//! ranges, writing, exact edits, listing, glob, grep, and refusals for `..`, outside
//! absolute paths and a symlink that leads out, FIFOs refused by name, `exclude` on walks,
//! and every spelling of a path reaching the same file.

use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, TestHost, plugin_block, writable_workspace};

/// A host with the fs plugin and a workspace folder holding a few files.
async fn host() -> (TestHost, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(workspace.path().join("src/nested")).unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    std::fs::write(workspace.path().join("src/main.rs"), "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    std::fs::write(workspace.path().join("src/nested/lib.rs"), "pub fn hi() {}\n").unwrap();
    let grant = writable_workspace(workspace.path());
    let model = FakeModel::start().await;
    (TestHost::with_plugins(&model, &plugin_block("fs", &grant)).await, workspace)
}

async fn call(test: &TestHost, tool: &str, args: Value) -> ToolResult {
    let session = test.session();
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.expect("the call runs")
}

async fn ok(test: &TestHost, tool: &str, args: Value) -> String {
    let result = call(test, tool, args).await;
    assert!(result.ok, "{tool} failed: {}", result.output);
    result.output
}

async fn error(test: &TestHost, tool: &str, args: Value) -> String {
    let result = call(test, tool, args).await;
    assert!(!result.ok, "{tool} should fail: {}", result.output);
    result.output
}

#[tokio::test]
async fn read_file_with_and_without_a_line_range() {
    let (test, _workspace) = host().await;
    let all = ok(&test, "read_file", json!({"path": "notes.txt"})).await;
    assert_eq!(all.lines().count(), 4);
    assert!(all.starts_with("     1\tone"), "{all}");
    let some =
        ok(&test, "read_file", json!({"path": "/workspace/notes.txt", "start_line": 2, "end_line": 3})).await;
    assert_eq!(some, "     2\ttwo\n     3\tthree\n");
    let missing = error(&test, "read_file", json!({"path": "nope.txt"})).await;
    assert!(missing.contains("nope.txt"), "{missing}");
}

#[tokio::test]
async fn write_and_edit_change_the_real_files() {
    let (test, workspace) = host().await;
    ok(&test, "write_file", json!({"path": "new/dir/a.txt", "content": "x y x"})).await;
    assert_eq!(std::fs::read_to_string(workspace.path().join("new/dir/a.txt")).unwrap(), "x y x");
    let twice =
        error(&test, "edit_file", json!({"path": "new/dir/a.txt", "old_string": "x", "new_string": "z"}))
            .await;
    assert!(twice.contains("occurs 2 times"), "{twice}");
    let absent =
        error(&test, "edit_file", json!({"path": "new/dir/a.txt", "old_string": "q", "new_string": "z"}))
            .await;
    assert!(absent.contains("not found"), "{absent}");
    ok(&test, "edit_file", json!({"path": "new/dir/a.txt", "old_string": "y", "new_string": "why"})).await;
    ok(
        &test,
        "edit_file",
        json!({"path": "new/dir/a.txt", "old_string": "x", "new_string": "z", "replace_all": true}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(workspace.path().join("new/dir/a.txt")).unwrap(), "z why z");
}

#[tokio::test]
async fn list_glob_and_grep() {
    let (test, _workspace) = host().await;
    assert_eq!(ok(&test, "list_dir", json!({})).await, "notes.txt\nsrc/");
    assert_eq!(ok(&test, "list_dir", json!({"path": "src"})).await, "main.rs\nnested/");
    assert_eq!(ok(&test, "glob", json!({"pattern": "**/*.rs"})).await, "src/main.rs\nsrc/nested/lib.rs");
    assert_eq!(ok(&test, "glob", json!({"pattern": "src/*.rs"})).await, "src/main.rs");
    let hits = ok(&test, "grep", json!({"text": "hi", "glob": "**/*.rs"})).await;
    assert_eq!(hits, "src/main.rs:2:     println!(\"hi\");\nsrc/nested/lib.rs:1: pub fn hi() {}");
    assert!(ok(&test, "grep", json!({"text": "absent"})).await.contains("no lines"));
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused_clearly() {
    let (test, workspace) = host().await;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path(), workspace.path().join("escape")).unwrap();
    std::os::unix::fs::symlink("notes.txt", workspace.path().join("inside-link")).unwrap();

    let dotdot = error(&test, "read_file", json!({"path": "../secret.txt"})).await;
    assert!(dotdot.contains("contains `..`"), "{dotdot}");
    let absolute = error(&test, "read_file", json!({"path": "/etc/passwd"})).await;
    assert!(absolute.contains("outside /workspace"), "{absolute}");
    let link = error(&test, "read_file", json!({"path": "escape/secret.txt"})).await;
    assert!(link.contains("symlink that leads outside"), "{link}");
    let write = error(&test, "write_file", json!({"path": "escape/planted.txt", "content": "x"})).await;
    assert!(write.contains("symlink"), "{write}");
    assert!(!outside.path().join("planted.txt").exists());
    std::os::unix::fs::symlink("..", workspace.path().join("up")).unwrap();
    let relative_link = error(&test, "list_dir", json!({"path": "up"})).await;
    assert!(relative_link.contains("symlink that leads outside"), "{relative_link}");
    // A link that stays inside works.
    assert!(ok(&test, "read_file", json!({"path": "inside-link"})).await.contains("one"));
    // Walking tools do not follow links out either.
    assert!(!ok(&test, "grep", json!({"text": "secret"})).await.contains("secret.txt"));
}

#[tokio::test]
async fn a_granted_folder_gone_after_load_fails_the_calls_that_reach_for_it_by_name() {
    let (test, workspace) = host().await;
    std::fs::remove_dir_all(workspace.path()).unwrap();
    let failed = error(&test, "read_file", json!({"path": "notes.txt"})).await;
    assert!(failed.contains("cannot open granted folder"), "{failed}");
    assert!(failed.contains(&workspace.path().display().to_string()), "{failed}");
}

/// A FIFO in the workspace: opening it would wait for a writer forever, so every tool that
/// opens a file refuses it, naming the path and what it is; walks step over it.
#[tokio::test]
async fn a_fifo_is_refused_by_name_instead_of_hanging() {
    let (test, workspace) = host().await;
    let made = std::process::Command::new("mkfifo").arg(workspace.path().join("pipe")).status().unwrap();
    assert!(made.success(), "mkfifo made the FIFO");
    for (tool, args) in [
        ("read_file", json!({"path": "pipe"})),
        ("write_file", json!({"path": "./pipe", "content": "x"})),
        ("edit_file", json!({"path": "/workspace/pipe", "old_string": "a", "new_string": "b"})),
    ] {
        let refused = error(&test, tool, args).await;
        assert!(refused.contains("`pipe`") && refused.contains("FIFO"), "{tool}: {refused}");
    }
    let grep = ok(&test, "grep", json!({"text": "one"})).await;
    assert!(grep.contains("notes.txt:1: one"), "{grep}");
    assert!(ok(&test, "list_dir", json!({})).await.contains("pipe"));
}

/// `exclude` (which the permissions plugin fills from path rules) keeps files and whole
/// folders out of grep, glob and list_dir.
#[tokio::test]
async fn walks_leave_out_what_exclude_names() {
    let (test, workspace) = host().await;
    std::fs::write(workspace.path().join(".env"), "KEY=one\n").unwrap();
    let grep = ok(&test, "grep", json!({"text": "one", "exclude": ["./.env", "src"]})).await;
    assert!(grep.contains("notes.txt") && !grep.contains(".env"), "{grep}");
    let glob = ok(&test, "glob", json!({"pattern": "**/*", "exclude": ["src/*"]})).await;
    assert!(glob.contains(".env") && !glob.contains("src/"), "{glob}");
    let list = ok(&test, "list_dir", json!({"exclude": [".env"]})).await;
    assert!(!list.contains(".env") && list.contains("notes.txt"), "{list}");
}

/// Every spelling of one path is that path; `..` is refused however it is spelled.
#[tokio::test]
async fn every_spelling_of_a_path_reaches_the_same_file() {
    let (test, _workspace) = host().await;
    for spelling in ["notes.txt", "./notes.txt", "/workspace/notes.txt", " notes.txt", ".//notes.txt"] {
        let text = ok(&test, "read_file", json!({"path": spelling})).await;
        assert!(text.starts_with("     1\tone"), "{spelling:?}: {text}");
    }
    let escape = error(&test, "read_file", json!({"path": "src/../notes.txt"})).await;
    assert!(escape.contains("contains `..`"), "{escape}");
}

/// The `file_edited` events `test` sent since the last look: (path, before, after).
fn edits(test: &TestHost) -> Vec<(String, Option<String>, Option<String>)> {
    test.take_events()
        .into_iter()
        .filter_map(|event| match event {
            agent_host::Event::FileEdited { edit, .. } => {
                assert!(!edit.texts_left_out);
                Some((edit.path, edit.before, edit.after))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn writes_and_edits_tell_front_ends_the_text_before_and_after_and_failures_tell_nothing() {
    let (test, _workspace) = host().await;
    let _ = test.take_events();
    let new = call(&test, "write_file", json!({"path": "src/new.txt", "content": "fresh\n"})).await;
    assert!(new.ok, "{}", new.output);
    assert_eq!(edits(&test), [("src/new.txt".to_owned(), None, Some("fresh\n".to_owned()))]);

    let over = call(&test, "write_file", json!({"path": "notes.txt", "content": "replaced\n"})).await;
    assert!(over.ok, "{}", over.output);
    assert_eq!(
        edits(&test),
        [("notes.txt".to_owned(), Some("one\ntwo\nthree\nfour\n".to_owned()), Some("replaced\n".to_owned()))]
    );

    let edit =
        call(&test, "edit_file", json!({"path": "src/main.rs", "old_string": "hi", "new_string": "hello"}))
            .await;
    assert!(edit.ok, "{}", edit.output);
    assert_eq!(
        edits(&test),
        [(
            "src/main.rs".to_owned(),
            Some("fn main() {\n    println!(\"hi\");\n}\n".to_owned()),
            Some("fn main() {\n    println!(\"hello\");\n}\n".to_owned())
        )]
    );

    let missed =
        call(&test, "edit_file", json!({"path": "src/main.rs", "old_string": "absent", "new_string": "x"}))
            .await;
    assert!(!missed.ok);
    assert_eq!(edits(&test), [], "a failed edit changed nothing and tells nothing");
    let read = call(&test, "read_file", json!({"path": "src/main.rs"})).await;
    assert!(read.ok);
    assert_eq!(edits(&test), [], "reading edits nothing");
}
