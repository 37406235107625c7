//! MCP servers never run code a plugin may write (issue 47, H1): the model, through a plugin
//! granted a writable workspace, must not get a file of its into a server the host starts
//! as the operator — not an editor's server started for a session whose `cwd` is that
//! workspace, not a `[[mcp]]` server started in it, not one run by `npx` from a package
//! cache a plugin may write.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ErrorCode, McpServer, McpServerStdio, NewSessionRequest, NewSessionResponse,
};

use crate::support::acp_client::{deployment, open, with_client};
use crate::support::binary::check_offline;
use crate::support::{FakeModel, config_text, plugin_block, writable_workspace};

/// Python and JavaScript a model could write with `write_file`: each writes `marker`
/// (outside the workspace) when run.
fn plant(workspace: &Path, marker: &Path) {
    let marker = marker.display();
    std::fs::write(
        workspace.join("legit_mcp.py"),
        format!("open({:?}, 'w').write('ran')\n", marker.to_string()),
    )
    .unwrap();
    std::fs::write(
        workspace.join("server.js"),
        format!("require('fs').writeFileSync({:?}, 'ran');\n", marker.to_string()),
    )
    .unwrap();
}

fn stdio(name: &str, command: &str, args: &[&str]) -> McpServer {
    McpServer::Stdio(
        McpServerStdio::new(name, command).args(args.iter().map(|arg| (*arg).to_owned()).collect()),
    )
}

/// A deployment whose fs plugin may write a workspace the model has planted code in, and
/// the marker that code writes when it runs, outside the workspace.
struct Planted {
    model: FakeModel,
    workspace: tempfile::TempDir,
    _outside: tempfile::TempDir,
    marker: std::path::PathBuf,
    dir: tempfile::TempDir,
}

async fn planted() -> Planted {
    let model = FakeModel::start().await;
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("pwned");
    plant(workspace.path(), &marker);
    let dir = deployment(&model, &plugin_block("fs", &writable_workspace(workspace.path())));
    Planted { model, workspace, _outside: outside, marker, dir }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editors_servers_start_in_a_private_folder_not_the_writable_project() {
    let planted = planted().await;
    let project = planted.workspace.path().to_owned();
    let (opened, _seen) = with_client(planted.dir.path(), vec![], async move |cx, _seen| {
        let _ = open(&cx, &project).await;
        let servers =
            vec![stdio("py", "python3", &["-m", "legit_mcp"]), stdio("js", "node", &["./server.js"])];
        let response: Result<NewSessionResponse, _> =
            cx.send_request(NewSessionRequest::new(&project).mcp_servers(servers)).block_task().await;
        response.map(|session| session.session_id.0.to_string())
    })
    .await;
    assert!(opened.is_ok(), "the session opens; its servers fail to find their code: {opened:?}");
    // The servers were started (and failed) before session/new answered; a moment more for
    // anything they might have left running.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!planted.marker.exists(), "a file the model wrote into the project ran as the operator");
    assert!(planted.model.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editors_server_whose_script_a_plugin_may_write_is_refused_naming_the_grant() {
    let planted = planted().await;
    let project = planted.workspace.path().to_owned();
    let script = planted.workspace.path().join("server.js").display().to_string();
    let (refused, _seen) = with_client(planted.dir.path(), vec![], async move |cx, _seen| {
        let _ = open(&cx, &project).await;
        let request = NewSessionRequest::new(&project).mcp_servers(vec![stdio("tools", "node", &[&script])]);
        let error = cx.send_request(request).block_task().await.expect_err("refused");
        (error.code, error.data.map(|data| data.to_string()).unwrap_or_default())
    })
    .await;
    assert_eq!(refused.0, ErrorCode::InvalidParams, "{refused:?}");
    let why = refused.1;
    assert!(why.contains("MCP server `tools`") && why.contains("\\\"/workspace\\\""), "{why}");
    assert!(why.contains("server.js"), "the file is named: {why}");
    assert!(!planted.marker.exists(), "nothing ran");
}

/// `agent-host check --offline` of `config` in `dir`, with `HOME` at `home` and no npm cache
/// named elsewhere: exit code and stderr.
fn check(dir: &Path, config: &str, home: &Path) -> (Option<i32>, String) {
    // A variable naming another npm cache would move what is checked.
    assert!(std::env::var_os("npm_config_cache").is_none() && std::env::var_os("NPM_CONFIG_CACHE").is_none());
    check_offline(dir, config, &[("HOME", home)])
}

#[test]
fn a_config_server_started_in_a_writable_grant_or_run_from_a_writable_cache_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    let fs = plugin_block("fs", &writable_workspace(&workspace));

    let in_workspace = "[[mcp]]\nname = \"helper\"\ncommand = \"python3\"\nargs = [\"-m\", \"legit_mcp\"]\ncwd = \"workspace\"\n";
    let (code, stderr) =
        check(dir.path(), &config_text("http://127.0.0.1:9/v1", &format!("{fs}{in_workspace}")), home.path());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("the folder MCP server `helper` starts in"), "{stderr}");
    assert!(stderr.contains("grants.dirs.\"/workspace\""), "the grant's field is named: {stderr}");

    let npm_cache = home.path().join(".npm");
    std::fs::create_dir_all(&npm_cache).unwrap();
    let fs_over_cache = plugin_block("fs", &writable_workspace(&npm_cache));
    let npx = "[[mcp]]\nname = \"files\"\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"workspace\"]\n";
    let (code, stderr) = check(
        dir.path(),
        &config_text("http://127.0.0.1:9/v1", &format!("{fs_over_cache}{npx}")),
        home.path(),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("the package cache `npx` runs MCP server `files` from"), "{stderr}");
}
