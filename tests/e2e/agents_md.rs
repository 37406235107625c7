//! The `agents-md` plugin through the real host, on a real workspace granted to it: trusted,
//! the model's system prompt holds the root's AGENTS.md and then a nested one, each under its
//! heading; an edit between turns is what the next turn sends, though the contribution is
//! reused while nothing changes; untrusted, neither file is sent; and the block `config.toml`
//! ships commented out works once uncommented and trusted; a child agent gets its parent's files
//! under its own system prompt.

use std::path::Path;

use crate::stock_config::commented_block;
use crate::support::{FakeModel, TestHost, config_text, plugin_block};

const ROOT: &str = "Run `make check` before you say you are done.";
const NESTED: &str = "Handlers return errors as JSON objects.";

/// A workspace with a root AGENTS.md and one in `api/`.
fn workspace() -> tempfile::TempDir {
    let workspace = tempfile::tempdir().unwrap();
    write(&workspace.path().join("AGENTS.md"), &format!("{ROOT}\n"));
    write(&workspace.path().join("api/AGENTS.md"), &format!("{NESTED}\n"));
    workspace
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `[plugin.config]` lines and the grant of `workspace` as the plugin's `/workspace`.
fn settings(workspace: &Path, config: &str) -> String {
    format!(
        "[plugin.config]\n{config}\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\" }}\n",
        workspace.display()
    )
}

async fn host(model: &FakeModel, block: &str) -> TestHost {
    TestHost::new(&config_text(&model.url(), block)).await.expect("the test host starts")
}

#[tokio::test]
async fn trusted_the_root_agents_md_and_a_nested_one_are_in_the_system_prompt_root_first() {
    let model = FakeModel::start().await;
    let workspace = workspace();
    // As the binary carries it.
    let block = format!(
        "[[plugin]]\nbuiltin = \"agents-md\"\n{}",
        settings(workspace.path(), "trust_project = true")
    );
    let test = host(&model, &block).await;
    let session = test.session();
    let prompt = test.system_prompt_of_a_turn(&model, &session, "hello").await;
    let root = prompt.find(ROOT).unwrap_or_else(|| panic!("the root's AGENTS.md: {prompt}"));
    let nested = prompt.find(NESTED).unwrap_or_else(|| panic!("api/AGENTS.md: {prompt}"));
    assert!(root < nested, "the root's first: {prompt}");
    assert!(
        prompt.contains(&format!(
            "### `api/AGENTS.md`: applies to the files under `api/`, and takes precedence there over the \
             AGENTS.md files above it\n\n{NESTED}"
        )),
        "{prompt}"
    );
}

#[tokio::test]
async fn an_agents_md_edited_between_turns_is_sent_at_the_next_turn() {
    let model = FakeModel::start().await;
    let workspace = workspace();
    let test =
        host(&model, &plugin_block("agents-md", &settings(workspace.path(), "trust_project = true"))).await;
    let session = test.session();
    let reused = || async { session.lock().await.provide_memo().reused() };
    let first = test.system_prompt_of_a_turn(&model, &session, "one").await;
    assert!(first.contains(NESTED), "{first}");
    let before = reused().await;
    let again = test.system_prompt_of_a_turn(&model, &session, "two").await;
    assert_eq!(again, first, "nothing changed");
    assert_eq!(reused().await, before + 1, "the same reading: the contribution is reused");
    write(&workspace.path().join("api/AGENTS.md"), "Handlers return errors as problem+json.\n");
    let edited = test.system_prompt_of_a_turn(&model, &session, "three").await;
    assert!(edited.contains("problem+json") && !edited.contains(NESTED), "{edited}");
    assert_eq!(reused().await, before + 1, "a new reading: `provide` is called, nothing stale is reused");
}

#[tokio::test]
async fn untrusted_neither_agents_md_is_in_the_system_prompt() {
    let model = FakeModel::start().await;
    let workspace = workspace();
    let test = host(&model, &plugin_block("agents-md", &settings(workspace.path(), ""))).await;
    let session = test.session();
    let prompt = test.system_prompt_of_a_turn(&model, &session, "hello").await;
    assert!(!prompt.contains(ROOT) && !prompt.contains(NESTED), "{prompt}");
    assert!(!prompt.contains("AGENTS.md"), "{prompt}");
}

#[tokio::test]
async fn the_shipped_block_uncommented_and_trusted_offers_them() {
    let model = FakeModel::start().await;
    let workspace = workspace();
    let mut entry = commented_block("agents-md");
    assert_eq!(entry["config"]["trust_project"].as_bool(), Some(false), "untrusted as shipped");
    entry["config"]["trust_project"] = true.into();
    entry["grants"]["dirs"]["/workspace"]["host"] = workspace.path().display().to_string().into();
    let block =
        toml::to_string(&toml::Table::from_iter([("plugin".to_owned(), vec![entry].into())])).unwrap();
    let test = host(&model, &block).await;
    let prompt = test.system_prompt_of_a_turn(&model, &test.session(), "hello").await;
    assert!(prompt.contains(ROOT) && prompt.contains(NESTED), "{prompt}");
}

#[tokio::test]
async fn a_child_agent_gets_its_parents_agents_md_under_its_own_system_prompt() {
    use crate::subagents::{EXPLORER, definitions, subagents, system, task};
    use crate::support::Reply;

    let model = FakeModel::start().await;
    let workspace = workspace();
    let agents = definitions(&[("explorer", EXPLORER)]);
    let block = format!(
        "{}{}{}",
        plugin_block("misbehave", ""),
        plugin_block("agents-md", &settings(workspace.path(), "trust_project = true")),
        subagents(agents.path())
    );
    let test = host(&model, &block).await;
    model.push(Reply::tool("task", &task("explorer", "look around")));
    model.push(Reply::text("done"));
    model.on_model("child-model", [Reply::text("looked")]);
    let session = test.session();
    test.turn(&session, "ask the explorer").await.unwrap();

    let parent = model.requests_to("fake");
    assert!(system(&parent[0]).contains(ROOT), "{}", system(&parent[0]));
    let child = model.requests_to("child-model");
    let prompt = system(&child[0]);
    assert!(prompt.starts_with("You are the explorer."), "its own system prompt first: {prompt}");
    let root = prompt.find(ROOT).unwrap_or_else(|| panic!("the root's AGENTS.md: {prompt}"));
    assert!(root < prompt.find(NESTED).expect("api/AGENTS.md"), "{prompt}");
}
