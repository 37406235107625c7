//! The shipped `config.toml` as a deployment runs it (only the endpoint, the paths and the
//! database changed): the todo completion loop runs in execute mode only, so a model in
//! plan mode that presents its plan and asks for approval ends the turn at once; and in a
//! deployment that starts sessions in execute mode, the loop runs from the first turn.

use agent_host::TurnEnd;

use crate::support::{FakeModel, Reply, TestHost, plugin_wasm, repo_root, shared_cache_dir, system_prompt};

/// The repository's `config.toml` pointed at `model`: each `builtin = "<name>"` entry replaced
/// by that plugin's component as the tests build it, the database and compile cache moved to
/// the test's own.
pub(crate) fn stock_config(model: &FakeModel) -> String {
    toml::to_string(&stock_table(model)).unwrap()
}

/// [`stock_config`] as a table, for a test to change one setting more.
pub(crate) fn stock_table(model: &FakeModel) -> toml::Table {
    let text = std::fs::read_to_string(repo_root().join("config.toml")).unwrap();
    let mut config: toml::Table = toml::from_str(&text).unwrap();
    let model_table = section(&mut config, "model");
    model_table.insert("base_url".into(), model.url().into());
    model_table.insert("api_key_env".into(), "AGENT_HOST_TEST_KEY".into());
    section(&mut config, "storage").insert("path".into(), "sessions.db".into());
    section(&mut config, "runtime")
        .insert("cache_dir".into(), shared_cache_dir().display().to_string().into());
    for plugin in config.get_mut("plugin").and_then(|p| p.as_array_mut()).unwrap() {
        let plugin = plugin.as_table_mut().unwrap();
        let package = plugin.remove("builtin").expect("the shipped plugins are builtins");
        plugin.insert("path".into(), plugin_wasm(package.as_str().unwrap()).display().to_string().into());
    }
    config
}

/// The `[[plugin]]` entry of `config` whose path is the built `package`.
pub(crate) fn plugin_entry<'a>(config: &'a mut toml::Table, package: &str) -> &'a mut toml::Table {
    let path = plugin_wasm(package).display().to_string();
    config
        .get_mut("plugin")
        .and_then(|plugins| plugins.as_array_mut())
        .and_then(|plugins| {
            plugins.iter_mut().find_map(|p| p.as_table_mut().filter(|p| p["path"].as_str() == Some(&path)))
        })
        .unwrap_or_else(|| panic!("config.toml has a [[plugin]] for {package}"))
}

fn section<'a>(config: &'a mut toml::Table, name: &str) -> &'a mut toml::Table {
    config
        .get_mut(name)
        .and_then(|value| value.as_table_mut())
        .unwrap_or_else(|| panic!("config.toml has [{name}]"))
}

#[tokio::test]
async fn in_plan_mode_a_presented_plan_ends_the_turn_and_in_execute_mode_the_loop_pushes_on() {
    let model = FakeModel::start().await;
    let test = TestHost::new(&stock_config(&model)).await.unwrap();
    let session = test.session();

    // Plan mode (agent-mode's default): the model plans with todos and asks for approval.
    model
        .push(Reply::tool("todos_add", r#"{"todos":[{"title":"Write the note"},{"title":"Proofread it"}]}"#));
    model.push(Reply::text("Here is the plan: write the note, then proofread it. Shall I go ahead?"));
    let plan = test.turn(&session, "Plan a release note.").await.unwrap();
    assert_eq!((plan.end, plan.iterations), (TurnEnd::Done, 2), "the open todos do not push a plan on");
    assert_eq!(model.requests().len(), 2);

    // Execute mode: the loop sends the model back while todos are open.
    let switched = test.host.command(&mut *session.lock().await, "/mode execute", &*test.events).await;
    assert_eq!(switched.as_deref(), Ok(""), "the view shows the switch; the answer does not repeat it");
    let shown = test.take_events().into_iter().any(|event| match event {
        agent_host::Event::ViewChanged { view } => view.widgets.iter().any(|widget| {
            matches!(widget, agent_host::events::Widget::Choice { id, current: Some(current), .. }
                if id == "mode" && current == "execute")
        }),
        _ => false,
    });
    assert!(shown, "the mode choice of the view moved to execute");
    model.push(Reply::text("Starting."));
    model.push(Reply::tool(
        "todos_complete",
        r#"{"items":[{"id":1,"reason":"written"},{"id":2,"reason":"proofread"}]}"#,
    ));
    model.push(Reply::text("Both done."));
    let execute = test.turn(&session, "Go ahead.").await.unwrap();
    assert_eq!((execute.end, execute.iterations, execute.reply.as_str()), (TurnEnd::Done, 3, "Both done."));
    let continued =
        test.take_events().iter().filter(|e| matches!(e, agent_host::Event::Continued { .. })).count();
    assert_eq!(continued, 1, "one push while the todos were open, none once they were done");
}

#[tokio::test]
async fn with_execute_as_the_default_mode_the_loop_runs_before_any_mode_is_set() {
    let model = FakeModel::start().await;
    let mut config = stock_table(&model);
    let agent_mode = plugin_entry(&mut config, "agent-mode");
    let settings = agent_mode.entry("config").or_insert_with(|| toml::Table::new().into());
    settings.as_table_mut().unwrap().insert("default_mode".into(), "execute".into());
    let test = TestHost::new(&toml::to_string(&config).unwrap()).await.unwrap();

    // No `/mode` yet: each session is in execute mode because the deployment says so. The
    // second starts from the contributions the first kept, and is pushed on all the same.
    for _ in 0..2 {
        let session = test.session();
        let before = model.requests().len();
        model.push(Reply::tool("todos_add", r#"{"todos":[{"title":"Write the note"}]}"#));
        model.push(Reply::text("Added it."));
        model.push(Reply::tool("todos_complete", r#"{"items":[{"id":1,"reason":"written"}]}"#));
        model.push(Reply::text("Written."));
        let turn = test.turn(&session, "Write a release note.").await.unwrap();
        assert_eq!((turn.end, turn.iterations, turn.reply.as_str()), (TurnEnd::Done, 4, "Written."));
        assert!(system_prompt(&model.requests()[before]).contains("The current mode is `execute`"));
        let continued =
            test.take_events().iter().filter(|e| matches!(e, agent_host::Event::Continued { .. })).count();
        assert_eq!(continued, 1, "the open todo pushed the model on once");
    }
}

/// The `[[plugin]]` block of `package` that the repository's `config.toml` ships commented
/// out, uncommented as a user would: from its `# [[plugin]]` line (followed by `# builtin =
/// "<package>"`) to the first line that is not `# ` something. The one entry, with the
/// builtin swapped for the built component.
pub(crate) fn commented_block(package: &str) -> toml::Table {
    let text = std::fs::read_to_string(repo_root().join("config.toml")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let path_line = format!("# builtin = \"{package}\"");
    let start = lines
        .windows(2)
        .position(|pair| pair[0] == "# [[plugin]]" && pair[1] == path_line)
        .unwrap_or_else(|| panic!("config.toml has a commented-out [[plugin]] for {package}"));
    let block: Vec<&str> = lines[start..].iter().map_while(|line| line.strip_prefix("# ")).collect();
    let mut table: toml::Table = toml::from_str(&block.join("\n"))
        .unwrap_or_else(|error| panic!("the {package} block parses once uncommented: {error}"));
    let mut entries = table.remove("plugin").and_then(|p| p.as_array().cloned()).expect("one [[plugin]]");
    let mut entry = entries.remove(0).as_table().cloned().unwrap();
    entry.remove("builtin");
    entry.insert("path".into(), plugin_wasm(package).display().to_string().into());
    entry
}

/// Points granted folder `guest` of `entry` at `host`, as a user would for their machine.
fn grant_folder(entry: &mut toml::Table, guest: &str, host: &std::path::Path) {
    let dirs = entry["grants"]["dirs"].as_table().cloned().expect("the block grants folders");
    let mut folder =
        dirs.get(guest).and_then(|f| f.as_table().cloned()).expect("the block grants this folder");
    folder.insert("host".into(), host.display().to_string().into());
    let grants = entry.get_mut("grants").and_then(|g| g.as_table_mut()).unwrap();
    let dirs = grants.get_mut("dirs").and_then(|d| d.as_table_mut()).unwrap();
    dirs.insert(guest.into(), folder.into());
}

/// The shipped config with `entry` added after its plugins, in execute mode (plan mode runs
/// nothing that changes things), approvals given (the operator would say yes).
async fn stock_host_with(
    model: &FakeModel,
    entry: toml::Table,
) -> (TestHost, agent_host::agent::SessionHandle) {
    let mut config = stock_table(model);
    section(&mut config, "agent").insert("on_ask".into(), "allow".into());
    config.get_mut("plugin").and_then(|p| p.as_array_mut()).unwrap().push(entry.into());
    let test = TestHost::new(&toml::to_string(&config).unwrap()).await.unwrap();
    let session = test.session();
    let switched = test.host.command(&mut *session.lock().await, "/mode execute", &*test.events).await;
    assert!(switched.is_ok(), "{switched:?}");
    (test, session)
}

/// A build that takes ten seconds: what the shipped shell block must run as written, though
/// `[runtime] limits` gives every plugin's call 2 seconds.
const TEN_SECOND_BUILD: &str = "for step in 1 2 3 4 5; do sleep 2; echo compiled $step; done; echo built";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_shell_block_runs_a_ten_second_build_as_written() {
    let model = FakeModel::start().await;
    let workspace = tempfile::tempdir().unwrap();
    let mut shell = commented_block("shell");
    grant_folder(&mut shell, "/workspace", workspace.path());
    let (test, session) = stock_host_with(&model, shell).await;
    let started = std::time::Instant::now();
    let args = serde_json::json!({ "command": TEN_SECOND_BUILD });
    let mut locked = session.lock().await;
    let result = test.host.invoke_tool(&mut locked, "shell", &args, &*test.events).await.unwrap();
    assert!(result.ok, "{}", result.output);
    assert!(
        result.output.starts_with("exit status: 0\n"),
        "not cut at the 2-second deadline: {}",
        result.output
    );
    assert!(result.output.contains("compiled 5\nbuilt\n"), "{}", result.output);
    assert!(started.elapsed() >= std::time::Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_skills_block_runs_a_skills_ten_second_script_as_written() {
    let model = FakeModel::start().await;
    let (workspace, user_skills) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let skill = user_skills.path().join("build");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: build\ndescription: Builds the project.\n---\nRun scripts/build.sh.\n",
    )
    .unwrap();
    std::fs::write(skill.join("scripts/build.sh"), format!("#!/bin/sh\n{TEN_SECOND_BUILD}\n")).unwrap();
    let mut skills = commented_block("skills");
    grant_folder(&mut skills, "/workspace", workspace.path());
    grant_folder(&mut skills, "/user-skills", user_skills.path());
    let (test, session) = stock_host_with(&model, skills).await;
    let args = serde_json::json!({ "skill": "build", "script": "scripts/build.sh" });
    let mut locked = session.lock().await;
    let result = test.host.invoke_tool(&mut locked, "run_skill_script", &args, &*test.events).await.unwrap();
    assert!(result.ok, "{}", result.output);
    assert!(result.output.starts_with("exit status: 0\n"), "{}", result.output);
    assert!(result.output.contains("compiled 5\nbuilt\n"), "{}", result.output);
}
