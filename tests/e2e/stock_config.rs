//! The shipped `config.toml` as a deployment runs it (only the endpoint, the paths and the
//! database changed): the todo completion loop runs in execute mode only, so a model in
//! plan mode that presents its plan and asks for approval ends the turn at once; and in a
//! deployment that starts sessions in execute mode, the loop runs from the first turn.

use agent_host::TurnEnd;

use crate::support::{FakeModel, Reply, TestHost, plugin_wasm, repo_root, shared_cache_dir, system_prompt};

/// The repository's `config.toml` pointed at `model`: each `plugins/<name>` entry replaced by
/// that plugin's built component, the database and compile cache moved to the test's own.
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
        let path = plugin["path"].as_str().unwrap().to_owned();
        let package = path.strip_prefix("plugins/").expect("stock plugins live in plugins/");
        plugin.insert("path".into(), plugin_wasm(package).display().to_string().into());
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
