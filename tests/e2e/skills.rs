//! The `skills` plugin through the real host, on real folders granted to it: skills found and
//! listed in the system prompt, `load_skill` giving the body to the model, a resource read and
//! an escape refused, a malformed SKILL.md reported by path while the others load, an
//! untrusted project folder left out, a loaded skill's result pinned through `/compact`, and a script
//! run through the `process` grant (and a clear error without it).

use std::path::Path;

use agent_host::Event;
use agent_host::agent::SessionHandle;
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, TestHost, config_text, plugin_block, system_prompt};

/// The body of the user skill `pdf`, which the tests look for in what the model is sent.
const PDF_BODY: &str = "# PDF\n\nAlways extract with scripts/extract.sh, never by hand.";

/// A workspace and a user skills folder, granted to the plugin as `/workspace` (writable, where
/// scripts run) and `/user-skills`.
struct Folders {
    workspace: tempfile::TempDir,
    user: tempfile::TempDir,
}

impl Folders {
    /// The user skills `pdf` (with a reference and a script) and `review`, and the project
    /// skill `deploy` under the workspace's `.agents/skills`.
    fn new() -> Self {
        let folders = Self { workspace: tempfile::tempdir().unwrap(), user: tempfile::tempdir().unwrap() };
        folders.user_skill("pdf", "Extracts text from PDF files.", PDF_BODY);
        write(&folders.user.path().join("pdf/references/forms.md"), "Fill forms field by field.");
        write(
            &folders.user.path().join("pdf/scripts/extract.sh"),
            "#!/bin/sh\necho \"extracting $1 and $2\"\necho \"from $(pwd)\"\n",
        );
        folders.user_skill("review", "Reviews a change for bugs.", "Read the diff twice.");
        let deploy = folders.workspace.path().join(".agents/skills/deploy/SKILL.md");
        write(&deploy, "---\nname: deploy\ndescription: Deploys this project.\n---\nRun make deploy.\n");
        folders
    }

    fn user_skill(&self, name: &str, description: &str, body: &str) {
        let text = format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n");
        write(&self.user.path().join(name).join("SKILL.md"), &text);
    }

    /// The plugin's block: `config` under `[plugin.config]`, `grants` under `[plugin.grants]`.
    fn block(&self, config: &str, grants: &str) -> String {
        let dirs = format!(
            "[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}\n\"/user-skills\" = {{ host = \"{}\" }}\n",
            self.workspace.path().display(),
            self.user.path().display()
        );
        plugin_block("skills", &format!("[plugin.config]\n{config}\n[plugin.grants]\n{grants}\n{dirs}"))
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A host with the skills plugin over `folders`, with `[model]` lines added.
async fn host(
    model: &FakeModel,
    folders: &Folders,
    config: &str,
    grants: &str,
    model_lines: &str,
) -> TestHost {
    let text = config_text(&model.url(), &folders.block(config, grants))
        .replace("timeout_secs = 5\n", &format!("timeout_secs = 5\n{model_lines}\n"));
    TestHost::new(&text).await.expect("the test host starts")
}

async fn call(test: &TestHost, session: &SessionHandle, tool: &str, args: Value) -> ToolResult {
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.expect("the call runs")
}

async fn command(test: &TestHost, session: &SessionHandle, line: &str) -> Result<String, String> {
    let mut session = session.lock().await;
    test.host.command(&mut session, line, &*test.events).await
}

/// The contents of the tool results one request carried.
fn tool_results(request: &Value) -> Vec<&str> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .filter_map(|message| message["content"].as_str())
        .collect()
}

#[tokio::test]
async fn skills_are_found_and_listed_in_the_system_prompt() {
    let model = FakeModel::start().await;
    let folders = Folders::new();
    let test = host(&model, &folders, "trust_project = true", "", "").await;
    let session = test.session();
    let prompt = test.system_prompt_of_a_turn(&model, &session, "hello").await;
    assert!(prompt.contains("## Skills\n"), "{prompt}");
    assert!(prompt.contains("call `load_skill` with its name"), "{prompt}");
    // The trusted project's skills first, then the operator's.
    assert!(
        prompt.contains(
            "scripts.\n\n- `deploy`: Deploys this project.\n- `pdf`: Extracts text from PDF files.\n- `review`: Reviews a change for bugs."
        ),
        "{prompt}"
    );
    assert!(!prompt.contains(PDF_BODY), "only the catalog, not the bodies: {prompt}");
    let requests = model.requests();
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str())
        .collect();
    for tool in ["load_skill", "read_skill_resource", "run_skill_script"] {
        assert!(tools.contains(&tool), "{tools:?}");
    }
}

#[tokio::test]
async fn load_skill_gives_the_model_the_body_and_a_resource_is_read() {
    let model = FakeModel::start().await;
    let folders = Folders::new();
    let test = host(&model, &folders, "", "", "").await;
    let session = test.session();
    model.push(Reply::tool("load_skill", &json!({"name": "pdf"}).to_string()));
    model.push(Reply::tool(
        "read_skill_resource",
        &json!({"skill": "pdf", "path": "references/forms.md"}).to_string(),
    ));
    model.push(Reply::text("done"));
    test.turn(&session, "extract the PDF").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let loaded = tool_results(&requests[1]);
    assert_eq!(loaded.len(), 1);
    assert!(
        loaded[0].starts_with(&format!("# Skill `pdf`\n\n{PDF_BODY}\n\n## Files of `pdf`")),
        "{}",
        loaded[0]
    );
    assert!(loaded[0].contains("- references/forms.md\n- scripts/extract.sh"), "{}", loaded[0]);
    assert_eq!(tool_results(&requests[2])[1], "Fill forms field by field.");
}

#[tokio::test]
async fn a_path_out_of_the_skill_is_refused() {
    let model = FakeModel::start().await;
    let folders = Folders::new();
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("secret.txt"), "the secret");
    // A link to another skill stays in the granted folder but leaves the skill; one to the
    // outside leaves both.
    std::os::unix::fs::symlink("../review", folders.user.path().join("pdf/sibling")).unwrap();
    std::os::unix::fs::symlink(outside.path(), folders.user.path().join("pdf/outside")).unwrap();
    let test = host(&model, &folders, "", "", "").await;
    let session = test.session();
    for (path, says) in [
        ("../review/SKILL.md", "contains `..`"),
        ("sibling/SKILL.md", "goes through the symlink `sibling`, which leads outside the skill's folder"),
        ("outside/secret.txt", "goes through the symlink `outside`, which leads outside the skill's folder"),
        ("/etc/passwd", "is an absolute path"),
    ] {
        let result =
            call(&test, &session, "read_skill_resource", json!({"skill": "pdf", "path": path})).await;
        assert!(!result.ok, "{path}: {}", result.output);
        assert!(result.output.contains(says), "{path}: {}", result.output);
        assert!(
            !result.output.contains("the secret") && !result.output.contains("Read the diff"),
            "{}",
            result.output
        );
    }
    let inside = call(
        &test,
        &session,
        "read_skill_resource",
        json!({"skill": "pdf", "path": "./references//forms.md"}),
    )
    .await;
    assert_eq!((inside.ok, inside.output.as_str()), (true, "Fill forms field by field."));
}

#[tokio::test]
async fn a_malformed_skill_md_is_reported_by_path_while_the_good_ones_load() {
    let model = FakeModel::start().await;
    let folders = Folders::new();
    write(&folders.user.path().join("Broken/SKILL.md"), "---\nname: Broken\ndescription: d\n---\n");
    write(&folders.user.path().join("nameless/SKILL.md"), "---\ndescription: no name\n---\n");
    let test = host(&model, &folders, "", "", "").await;
    let session = test.session();
    let prompt = test.system_prompt_of_a_turn(&model, &session, "hello").await;
    assert!(prompt.contains("- `pdf`: ") && prompt.contains("- `review`: "), "{prompt}");
    assert!(!prompt.contains("Broken") && !prompt.contains("nameless"), "{prompt}");
    let reports: Vec<(Value, String)> = test
        .take_events()
        .into_iter()
        .filter_map(|event| match event {
            Event::Plugin { plugin, kind, payload, display }
                if plugin == "skills" && kind == "skill_invalid" =>
            {
                Some((payload.value(), display.expect("the operator sees it")))
            }
            _ => None,
        })
        .collect();
    assert_eq!(reports.len(), 2, "{reports:?}");
    let broken = "/user-skills/Broken/SKILL.md";
    assert_eq!(reports[0].0["path"], broken);
    assert_eq!(
        reports[0].1,
        format!(
            "skills: skipped {broken}: `name` \"Broken\" holds `B`: only lowercase letters a-z, digits 0-9 and hyphens are allowed"
        )
    );
    assert_eq!(
        reports[1].1,
        "skills: skipped /user-skills/nameless/SKILL.md: `name` is missing; it is required"
    );
    let load = call(&test, &session, "load_skill", json!({"name": "Broken"})).await;
    assert!(!load.ok && load.output.contains("the skills are: pdf, review"), "{}", load.output);
}

#[tokio::test]
async fn an_untrusted_project_folder_is_left_out() {
    let model = FakeModel::start().await;
    let folders = Folders::new();
    let test = host(&model, &folders, "", "", "").await;
    let session = test.session();
    let prompt = test.system_prompt_of_a_turn(&model, &session, "hello").await;
    assert!(prompt.contains("- `pdf`: "), "{prompt}");
    assert!(!prompt.contains("deploy"), "the project is not trusted: {prompt}");
    let load = call(&test, &session, "load_skill", json!({"name": "deploy"})).await;
    assert!(!load.ok, "{}", load.output);
    assert!(load.output.starts_with("there is no skill named `deploy`"), "{}", load.output);
    let listing = command(&test, &session, "/skills").await.unwrap();
    assert!(
        listing.contains("not used: /workspace/.agents/skills (project skills need `trust_project = true`)"),
        "{listing}"
    );
    assert!(listing.starts_with("2 skills:\n  pdf (user) /user-skills/pdf\n"), "{listing}");
}

#[tokio::test]
async fn a_loaded_skills_result_is_pinned_through_a_compaction() {
    let model = FakeModel::start().await;
    let folders = Folders::new();
    let test = host(&model, &folders, "", "", "context_window = 100000\nmax_output_tokens = 500").await;
    let session = test.session();
    model.push(Reply::tool("load_skill", &json!({"name": "pdf"}).to_string()));
    model.push(Reply::text("loaded"));
    test.turn(&session, "use the pdf skill").await.unwrap();
    let filler = "words that take room in the history ".repeat(20);
    for round in 0..6 {
        model.push(Reply::text(&format!("reply {round}: {filler}")));
        test.turn(&session, &format!("prompt {round}: {filler}")).await.unwrap();
    }
    let before = model.requests().last().unwrap().clone();
    assert!(tool_results(&before).iter().any(|result| result.contains(PDF_BODY)), "the history has it");
    assert!(!system_prompt(&before).contains(PDF_BODY), "not twice before a compaction");

    let answer = command(&test, &session, "/compact").await.unwrap();
    assert!(answer.starts_with("compacted by truncate"), "{answer}");
    model.push(Reply::text("ok"));
    test.turn(&session, "go on").await.unwrap();
    let after = model.requests().last().unwrap().clone();
    let sent = after["messages"].to_string();
    assert!(!sent.contains("prompt 0: "), "the compaction took the older turns out: {sent}");
    assert!(
        tool_results(&after).iter().any(|result| result.contains(PDF_BODY)),
        "the load_skill result was pinned by the pre-compact hook and is still sent: {after}"
    );
    assert!(!system_prompt(&after).contains(PDF_BODY), "and not twice");
}

#[tokio::test]
async fn a_script_runs_through_the_process_grant() {
    let model = FakeModel::start().await;
    let folders = Folders::new();
    let test = host(&model, &folders, "", "process = true", "").await;
    let session = test.session();
    let args =
        json!({"skill": "pdf", "script": "scripts/extract.sh", "args": ["a file.pdf", "it's; rm -rf /"]});
    let result = call(&test, &session, "run_skill_script", args).await;
    assert!(result.ok, "{}", result.output);
    let workspace = folders.workspace.path().canonicalize().unwrap();
    assert!(
        result.output.starts_with("exit status: 0\nstdout:\nextracting a file.pdf and it's; rm -rf /\n"),
        "{}",
        result.output
    );
    assert!(result.output.contains(&format!("from {}\n", workspace.display())), "{}", result.output);
    let outside =
        call(&test, &session, "run_skill_script", json!({"skill": "pdf", "script": "references/forms.md"}))
            .await;
    assert!(!outside.ok && outside.output.contains("is not under scripts/"), "{}", outside.output);
}

#[tokio::test]
async fn without_the_process_grant_the_script_tool_names_the_grant() {
    let model = FakeModel::start().await;
    let folders = Folders::new();
    let test = host(&model, &folders, "", "", "").await;
    let session = test.session();
    let result =
        call(&test, &session, "run_skill_script", json!({"skill": "pdf", "script": "extract.sh"})).await;
    assert!(!result.ok, "{}", result.output);
    assert!(
        result
            .output
            .starts_with("cannot run `extract.sh` of skill `pdf`: plugin `skills` may not run processes"),
        "{}",
        result.output
    );
    assert!(result.output.contains("`process = true`"), "{}", result.output);
}
