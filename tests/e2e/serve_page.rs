//! The web page of `agent-host serve` in a real browser: headless Chromium (Debian's), driven
//! by `tests/browser/page.mjs` with playwright-core, against the real binary and a scripted
//! model — sign in, a session, a prompt whose checklist ticks to done through two approvals
//! answered in the page, a choice switched (or shown read-only), the session reopened, a
//! reload. The page knows no plugin: the checklist and the choices are drawn from the
//! plugins' views, so swapping the mode plugin for a custom one changes what it shows with
//! no page code. The screenshots of each step are kept in `target/e2e-screenshots/`.

use crate::support::serve::{serve, serve_with_a_sign_in_link, token};
use crate::support::{FakeModel, Reply, plugin_block, repo_root, writable_workspace};

/// Two todos added, each completed through an approval, then the answer; `between` goes
/// after the first, in order. The texts carry markup, which the page must show as text: page.mjs
/// fails on any element it would make, and on an approval card holding an invisible
/// character raw. Then the answer to the prompt sent after reopening.
fn script(model: &FakeModel, between: Vec<Reply>) {
    let titles = r#"{"todos": [{"title": "write the <b>note</b>"}, {"title": "check <img src=x onerror=\"window.__pwned=1\">"}]}"#;
    model.push(Reply::tool("todos_add", titles));
    for reply in between {
        model.push(reply);
    }
    // The reason hides a bidi override and a zero-width space: the approval card must show
    // them as escapes, not obey them.
    model.push(Reply::tool("todos_complete", r#"{"items": [{"id": 1, "reason": "writ\u202eten\u200b"}]}"#));
    model.push(Reply::tool("todos_complete", r#"{"items": [{"id": 2, "reason": "checked"}]}"#));
    model.push(Reply::text("Both steps are done. <img src=x onerror=\"window.__pwned=1\"><b>bold?</b><script>window.__pwned=1</script>"));
    // Markdown, drawn as such; the markup inside it still only text.
    model.push(Reply::text(
        "## Next steps\n\n- a **bold** step\n- `code` and <b>not bold</b>\n\n```rust\nlet tag = \"<b>\";\n```\n\n| name | size |\n|---|--:|\n| a <b> | 1 |\n| b | 22 |\n\nAnything else?",
    ));
}

/// Every `todos_complete` is put to the operator, for a reason with inline code in it.
const ASK: &str = "[plugin.config]\ndefault = \"allow\"\nrules = [{ tool = \"todos_complete\", decision = \"ask\", reason = \"a person ticks `todos_complete` items off\" }]";

/// As [`ASK`], and every `read_file` refused.
const ASK_AND_DENY: &str = "[plugin.config]\ndefault = \"allow\"\nrules = [{ tool = \"todos_complete\", decision = \"ask\", reason = \"a person ticks `todos_complete` items off\" }, { tool = \"read_file\", decision = \"deny\", reason = \"no reading here\" }]";

/// How the page signs in.
#[derive(Clone, Copy)]
enum SignIn {
    /// The admin's configured token, typed into the form (only an admin may reload).
    Form,
    /// The link a server with no `[serve] tokens` printed, its one-time token an admin's.
    Link,
}

/// page.mjs against a server of `plugins`, signed in as `sign_in` says, with `env`; its
/// screenshots in `target/e2e-screenshots/NAME`. Panics with what it said unless every step
/// passed; returns the model calls made.
async fn run_page(
    model: &FakeModel,
    plugins: &str,
    name: &str,
    sign_in: SignIn,
    env: &[(&str, &str)],
) -> usize {
    crate::support::install_browser();
    let (mut server, token) = match sign_in {
        SignIn::Form => (serve(model, plugins, "").await, token("root").to_owned()),
        SignIn::Link => {
            let (server, link) = serve_with_a_sign_in_link(model, plugins).await;
            let token = link.rsplit_once("#token=").unwrap().1.to_owned();
            (server, token)
        }
    };
    let shots = repo_root().join("target/e2e-screenshots").join(name);
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).unwrap();
    let mut command = tokio::process::Command::new("node");
    command
        .arg(repo_root().join("tests/browser/page.mjs"))
        .arg(format!("{}/", server.base))
        .arg(&token)
        .arg(&shots);
    if matches!(sign_in, SignIn::Link) {
        command.env("PAGE_SIGN_IN", "link");
    }
    command.env("PAGE_EXPECT_SHOWN", "writ\\u{202e}ten\\u{200b}");
    command.env("PAGE_EXPECT_REASON_CODE", "todos_complete");
    for (variable, value) in env {
        command.env(variable, value);
    }
    let output = command.output().await.unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the page's run failed:\n{said}");
    assert!(std::fs::read_dir(&shots).unwrap().count() >= 8, "a screenshot per step: {said}");
    server.child.kill().await.unwrap();
    model.requests().len()
}

#[tokio::test]
async fn the_stock_deployment_shows_the_checklist_and_a_mode_switcher_from_views() {
    let model = FakeModel::start().await;
    script(&model, Vec::new());
    let plugins = format!(
        "{}{}{}",
        plugin_block("todo", ""),
        plugin_block("agent-mode", ""),
        plugin_block("permissions", ASK)
    );
    let calls = run_page(&model, &plugins, "page", SignIn::Form, &[("PAGE_SWITCH", "execute")]).await;
    assert_eq!(calls, 5, "the whole script was played");
}

#[tokio::test]
async fn a_custom_mode_plugin_shows_its_stages_and_the_current_one_with_no_switcher() {
    let model = FakeModel::start().await;
    // The model moves the stage: the page shows it move, and offers no way to move it. Then it
    // writes a file and edits it, which the page draws as diffs, its markup still text; then
    // it reads the file, which the policy refuses.
    let write = Reply::tool("write_file", r##"{"path": "notes.md", "content": "# Notes\n<b>first</b>\n"}"##)
        .and_tool(
            "edit_file",
            r#"{"path": "notes.md", "old_string": "<b>first</b>", "new_string": "second"}"#,
        )
        .and_tool("read_file", r#"{"path": "notes.md"}"#);
    script(&model, vec![Reply::tool("advance_stage", r#"{"to": "research"}"#), write]);
    let workspace = tempfile::tempdir().unwrap();
    let grant = writable_workspace(workspace.path());
    let plugins = format!(
        "{}{}{}{}",
        plugin_block("todo", ""),
        plugin_block("triage-modes", "[plugin.grants]\nread_state = [\"todo\"]"),
        plugin_block("permissions", ASK_AND_DENY),
        plugin_block("fs", &grant)
    );
    let env = [
        ("PAGE_SWITCH", "-"),
        ("PAGE_EXPECT_CHOICE", "triage research review|research"),
        ("PAGE_EXPECT_DIFF", "notes.md|+ # Notes|+ <b>first</b>;notes.md|  # Notes|- <b>first</b>|+ second"),
        ("PAGE_EXPECT_DENIED", "read_file"),
    ];
    // Signed in through the link a server without `[serve] tokens` prints.
    let calls = run_page(&model, &plugins, "page-custom-mode", SignIn::Link, &env).await;
    assert_eq!(calls, 7, "the whole script was played");
}
