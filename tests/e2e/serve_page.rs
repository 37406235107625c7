//! The web page of `agent-host serve` in a real browser: headless Chromium (Debian's), driven
//! by `tests/browser/page.mjs` with playwright-core, against the real binary and a scripted
//! model — sign in, a session, a prompt whose todo list ticks to done through two approvals
//! answered in the page, a mode switch, a reload. The screenshots of each step are kept in
//! `target/e2e-screenshots/page/`.

use crate::support::serve::{serve, token};
use crate::support::{FakeModel, Reply, plugin_block, repo_root};

/// Two todos added, each completed through an approval, then the answer. The texts carry
/// markup, which the page must show as text: page.mjs fails on any element it would make,
/// and on an approval card holding an invisible character raw.
fn script(model: &FakeModel) {
    let titles = r#"{"todos": [{"title": "write the <b>note</b>"}, {"title": "check <img src=x onerror=\"window.__pwned=1\">"}]}"#;
    model.push(Reply::tool("todos_add", titles));
    // The reason hides a bidi override and a zero-width space: the approval card must show
    // them as escapes, not obey them.
    model.push(Reply::tool("todos_complete", r#"{"items": [{"id": 1, "reason": "writ\u202eten\u200b"}]}"#));
    model.push(Reply::tool("todos_complete", r#"{"items": [{"id": 2, "reason": "checked"}]}"#));
    model.push(Reply::text("Both steps are done. <img src=x onerror=\"window.__pwned=1\"><b>bold?</b><script>window.__pwned=1</script>"));
}

#[tokio::test]
async fn a_person_signs_in_runs_a_turn_answers_approvals_switches_mode_and_reloads() {
    let installed = std::process::Command::new("bash")
        .arg(repo_root().join("scripts/install-browser.sh"))
        .status()
        .unwrap();
    assert!(installed.success(), "installing the browser failed");

    let model = FakeModel::start().await;
    script(&model);
    let ask = "[plugin.config]\ndefault = \"allow\"\nrules = [{ tool = \"todos_complete\", decision = \"ask\", reason = \"a person ticks items off\" }]";
    let plugins = format!(
        "{}{}{}",
        plugin_block("todo", ""),
        plugin_block("agent-mode", ""),
        plugin_block("permissions", ask)
    );
    // The admin's token: only an admin may reload.
    let mut server = serve(&model, &plugins, "").await;
    let base = server.base.clone();

    let shots = repo_root().join("target/e2e-screenshots/page");
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).unwrap();
    let output = tokio::process::Command::new("node")
        .arg(repo_root().join("tests/browser/page.mjs"))
        .arg(format!("{base}/"))
        .arg(token("root"))
        .arg(&shots)
        .env("PAGE_MODE", "execute")
        .env("PAGE_EXPECT_SHOWN", "writ\\u{202e}ten\\u{200b}")
        .output()
        .await
        .unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the page's run failed:\n{said}");
    assert!(std::fs::read_dir(&shots).unwrap().count() >= 6, "a screenshot per step: {said}");
    let completions = model.requests().len();
    assert_eq!(completions, 4, "the whole script was played: {said}");
    server.child.kill().await.unwrap();
}
