//! A child agent (contract 0.2.8) on the web page of `agent-host serve`, in headless Chromium
//! (`tests/browser/children.mjs`): the child's card appears nested in the card of the call
//! that started it, with its name, its own calls, the approval one of them needs (answered in
//! the card), its state and its answer, and is drawn again the same after the page reloads.
//! The screenshots are kept in `target/e2e-screenshots/page-children/`.

use crate::subagents::{agent, definitions, subagents, task};
use crate::support::serve::{serve, token};
use crate::support::{ASK_ABOUT_TOUCH, FakeModel, Reply, plugin_block, repo_root};

#[tokio::test]
async fn a_child_agent_is_drawn_nested_in_its_call_with_its_calls_approval_and_answer() {
    crate::support::install_browser();
    let model = FakeModel::start().await;
    model.push(Reply::tool("task", &task("fixer", "touch the file")));
    model.push(Reply::text("the fixer is done"));
    model.on_model(
        "child-model",
        [
            Reply::tool("touch", "{}"),
            Reply::tool("echo", r#"{"text":"checked"}"#),
            Reply::text("**touched** it"),
        ],
    );
    let agents = definitions(&[("fixer", &agent("fixer", "child-model", "echo, touch"))]);
    let plugins = format!(
        "{}{}{}",
        plugin_block("misbehave", ""),
        plugin_block("permissions", ASK_ABOUT_TOUCH),
        subagents(agents.path())
    );
    let mut server = serve(&model, &plugins, "").await;
    let shots = repo_root().join("target/e2e-screenshots/page-children");
    let _ = std::fs::remove_dir_all(&shots);
    let output = tokio::process::Command::new("node")
        .arg(repo_root().join("tests/browser/children.mjs"))
        .arg(format!("{}/", server.base))
        .arg(token("root"))
        .arg(&shots)
        .env("CHILD_PROMPT", "Have the fixer touch it.")
        .env("CHILD_AGENT", "fixer")
        .env("CHILD_CALLS", "touch,echo")
        .env("CHILD_ANSWER", "touched it")
        .output()
        .await
        .unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the page's run failed:\n{said}");
    assert_eq!(model.requests_to("child-model").len(), 3, "the child's whole script was played");
    server.child.kill().await.unwrap();
}
