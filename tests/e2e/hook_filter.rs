//! Tool hooks' filters (`hook-filter`, contract 0.1.2): a plugin declares in `configure`
//! which tool calls its `pre-tool-use` / `post-tool-use` need to see, and the host calls
//! them for those only — counted call by call, with the stock agent-mode and permissions.

use agent_host::plugins::{Export, LoadedPlugin};
use agent_host::tools::ToolResult;
use serde_json::{Value, json};

use crate::support::{FakeModel, TestHost, plugin_block, writable_workspace};

/// todo, agent-mode (plan mode by default), permissions with `permissions_config`, and fs
/// on a workspace holding a short and a long file.
async fn host(permissions_config: &str) -> (TestHost, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("short.txt"), "tiny\n").unwrap();
    std::fs::write(workspace.path().join("long.txt"), "a line of text\n".repeat(20)).unwrap();
    let grant = writable_workspace(workspace.path());
    let plugins = format!(
        "{}{}{}{}",
        plugin_block("todo", ""),
        plugin_block("agent-mode", ""),
        plugin_block("permissions", &format!("[plugin.config]\n{permissions_config}")),
        plugin_block("fs", &grant),
    );
    let model = FakeModel::start().await;
    (TestHost::with_plugins(&model, &plugins).await, workspace)
}

async fn call(test: &TestHost, tool: &str, args: Value) -> ToolResult {
    let session = test.session();
    let mut session = session.lock().await;
    test.host.invoke_tool(&mut session, tool, &args, &*test.events).await.expect("the call runs")
}

fn plugin(test: &TestHost, name: &str) -> std::sync::Arc<LoadedPlugin> {
    test.host.plugins().plugins().iter().find(|p| p.name() == name).expect("loaded").clone()
}

/// Everything allowed by the preset: permissions still judges every call (no rule covers it).
const TRUST: &str = "preset = \"trust\"";

#[tokio::test]
async fn agent_mode_sees_only_mutating_tools_and_permissions_post_hook_is_never_called() {
    let (test, workspace) = host(TRUST).await;
    let added = call(&test, "todos_add", json!({"todos": [{"title": "look around"}]})).await;
    assert!(added.ok, "{}", added.output);
    let read = call(&test, "read_file", json!({"path": "short.txt"})).await;
    assert!(read.ok, "{}", read.output);
    // Plan mode is read-only: agent-mode must still see, and refuse, the write.
    let write = call(&test, "write_file", json!({"path": "new.txt", "content": "x"})).await;
    assert!(!write.ok && write.output.contains("allows only tools that do not"), "{}", write.output);
    assert!(!workspace.path().join("new.txt").exists());

    let mode = plugin(&test, "agent-mode");
    let permissions = plugin(&test, "permissions");
    assert_eq!(mode.calls().get(Export::PreToolUse), 1, "only the mutating call: {}", mode.calls().summary());
    assert_eq!(permissions.calls().get(Export::PreToolUse), 3, "permissions decides every call");
    // No audit and no result cap: nothing to do after a call.
    assert_eq!(permissions.calls().get(Export::PostToolUse), 0);
    assert_eq!(plugin(&test, "fs").calls().get(Export::CallTool), 1, "the refused write never ran");
}

#[tokio::test]
async fn permissions_is_not_asked_about_tools_an_allow_rule_always_allows() {
    let rules = r#"rules = [
        { tool = "todos_*", decision = "allow" },
        { tool = "read_file", decision = "allow", args = { path = "*.txt" } },
        { tool = "write_file", decision = "deny" },
    ]"#;
    let (test, _workspace) = host(rules).await;
    let permissions = plugin(&test, "permissions");
    let asked = || permissions.calls().get(Export::PreToolUse);
    assert!(call(&test, "todos_add", json!({"todos": [{"title": "a"}]})).await.ok);
    assert!(call(&test, "todos_get_all", json!({})).await.ok);
    assert_eq!(asked(), 0, "`todos_*` is allowed whatever the call");
    // An allow rule with an argument pattern decides nothing in advance.
    assert!(call(&test, "read_file", json!({"path": "short.txt"})).await.ok);
    assert_eq!(asked(), 1);
    // Refused by agent-mode (plan mode) too; the earlier hook's reason is the one shown.
    let write = call(&test, "write_file", json!({"path": "x.txt", "content": "x"})).await;
    assert!(!write.ok, "{}", write.output);
    assert_eq!(asked(), 2, "the deny rule's tool is judged");
}

#[tokio::test]
async fn an_allow_rule_that_a_deny_rule_may_overlap_is_still_judged_call_by_call() {
    let rules = r#"rules = [
        { tool = "todos_*", decision = "allow" },
        { tool = "*_remove", decision = "deny" },
    ]"#;
    let (test, _workspace) = host(rules).await;
    assert!(call(&test, "todos_add", json!({"todos": [{"title": "a"}]})).await.ok);
    let removed = call(&test, "todos_remove", json!({"ids": [1]})).await;
    assert!(!removed.ok && removed.output.contains("refused by permissions"), "{}", removed.output);
    assert_eq!(plugin(&test, "permissions").calls().get(Export::PreToolUse), 2);
}

#[tokio::test]
async fn a_result_cap_calls_post_tool_use_only_for_results_longer_than_the_cap() {
    let (test, _workspace) = host(&format!("{TRUST}\nmax_result_bytes = 100")).await;
    let permissions = plugin(&test, "permissions");
    let short = call(&test, "read_file", json!({"path": "short.txt"})).await;
    assert!(short.ok && !short.output.contains("[permissions:"), "{}", short.output);
    assert_eq!(permissions.calls().get(Export::PostToolUse), 0);
    let long = call(&test, "read_file", json!({"path": "long.txt"})).await;
    assert!(long.output.contains("[permissions: result cut to 100 of"), "{}", long.output);
    assert_eq!(permissions.calls().get(Export::PostToolUse), 1);
}

#[tokio::test]
async fn with_the_audit_on_pre_and_post_tool_use_see_every_call() {
    let audit = tempfile::tempdir().unwrap();
    let config = format!("{TRUST}\naudit = true\n{}", crate::support::audit_grant(audit.path()));
    let (test, _workspace) = host(&config).await;
    call(&test, "read_file", json!({"path": "short.txt"})).await;
    call(&test, "todos_get_all", json!({})).await;
    assert_eq!(plugin(&test, "permissions").calls().get(Export::PostToolUse), 2);
    assert_eq!(plugin(&test, "permissions").calls().get(Export::PreToolUse), 2);
    let lines = std::fs::read_to_string(audit.path().join("audit.jsonl")).expect("the audit file");
    assert_eq!(lines.lines().count(), 4, "a line when each call is decided and one when it ends: {lines}");
}

#[tokio::test]
async fn plugins_lists_the_calls_each_plugin_served() {
    let (test, _workspace) = host(TRUST).await;
    call(&test, "read_file", json!({"path": "short.txt"})).await;
    let session = test.session();
    let mut session = session.lock().await;
    let table = test.host.command(&mut session, "/plugins", &agent_host::events::NoEvents).await.unwrap();
    // The calls, before what the plugin is granted (`; granted: dirs`).
    fn calls(line: &str) -> &str {
        line.split("; granted:").next().unwrap_or_default()
    }
    let fs = table.lines().find(|l| l.starts_with("fs@")).unwrap_or_default();
    assert!(calls(fs).ends_with(", call-tool 1"), "{table}");
    let permissions = table.lines().find(|l| l.starts_with("permissions@")).unwrap_or_default();
    assert!(calls(permissions).ends_with(", pre-tool-use 1"), "no post-tool-use: {table}");
    // When each was loaded, as a person reads it: seconds ago, not a Unix timestamp.
    assert!(fs.contains(" loaded ") && fs.contains(" s ago") && !fs.contains("unix"), "{table}");
}
