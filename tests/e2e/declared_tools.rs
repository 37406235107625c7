//! Tools declared once, from `configure` (contract 0.2.1): offered on every model call
//! without a `provide` call, checked at load, bounded.

use std::sync::Arc;

use agent_host::plugins::{Export, LoadedPlugin};

use crate::support::{FakeModel, Reply, TestHost, config_text, plugin_block};

fn plugin(test: &TestHost, name: &str) -> Arc<LoadedPlugin> {
    test.host.plugins().plugins().iter().find(|p| p.name() == name).expect("loaded").clone()
}

async fn load_error(block: &str) -> String {
    let model = FakeModel::start().await;
    let config = config_text(&model.url(), &plugin_block("misbehave", block));
    TestHost::new(&config).await.err().expect("the load fails").to_string()
}

#[tokio::test]
async fn a_plugin_with_only_tools_is_offered_on_every_call_and_never_asked_to_provide() {
    let workspace = tempfile::tempdir().unwrap();
    let block = format!(
        "[plugin.grants]\nprocess = true\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}\n",
        workspace.path().display()
    );
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(&model, &plugin_block("shell", &block)).await;
    let session = test.session();
    for _ in 0..3 {
        model.push(Reply::text("ok"));
        test.turn(&session, "hello").await.unwrap();
    }
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        let tools = request["tools"].as_array().expect("tools on offer");
        let shell = tools.iter().find(|tool| tool["function"]["name"] == "shell").expect("the shell tool");
        assert_eq!(shell["function"]["parameters"]["type"], "object", "{shell}");
        assert!(shell["function"]["parameters"]["properties"]["command"].is_object(), "{shell}");
    }
    let shell = plugin(&test, "shell");
    assert_eq!(shell.calls().get(Export::Provide), 0, "{}", shell.calls().summary());
    assert_eq!(shell.declared_tools().len(), 1);
    assert!(shell.declared_tools()[0].spec.mutates, "declared as it is: running commands changes things");
}

#[tokio::test]
async fn a_declared_tool_with_a_schema_that_is_not_json_is_a_load_error_naming_plugin_and_tool() {
    let error = load_error("[plugin.config]\ndeclare_bad_schema = true\n").await;
    assert!(error.contains("plugin misbehave@0.1.0"), "{error}");
    assert!(error.contains("the schema of tool `broken` is not JSON"), "{error}");
    assert!(error.contains("config.toml:"), "names the file and line: {error}");
}

#[tokio::test]
async fn declaring_past_the_bound_fails_the_load_naming_it() {
    // 256 is the bound; misbehave declares its own tools beside the extra ones.
    let error = load_error("[plugin.config]\ndeclare_extra_tools = 300\n").await;
    assert!(error.contains("misbehave@0.1.0"), "{error}");
    assert!(error.contains("declared more than 256 tools"), "{error}");
}

#[tokio::test]
async fn many_declared_tools_under_the_bound_all_reach_the_model() {
    let model = FakeModel::start().await;
    let test = TestHost::with_plugins(
        &model,
        &plugin_block("misbehave", "[plugin.config]\ndeclare_extra_tools = 200\n"),
    )
    .await;
    model.push(Reply::text("ok"));
    test.turn(&test.session(), "hello").await.unwrap();
    let request = &model.requests()[0];
    let names: Vec<&str> =
        request["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert!(
        names.contains(&"extra_0") && names.contains(&"extra_199") && names.contains(&"echo"),
        "{names:?}"
    );
}

#[tokio::test]
async fn provide_returning_a_declared_name_is_a_load_error_saying_so() {
    let error = load_error("[plugin.config]\nprovide_declared_name = true\n").await;
    assert!(error.contains("plugin misbehave@0.1.0 offers the tool `echo` twice"), "{error}");
    assert!(error.contains("declares it from `configure` and its `provide` returns it too"), "{error}");
}
