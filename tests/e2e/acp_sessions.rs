//! `agent-host acp`'s sessions as an editor opens them: the MCP servers it passes attached to
//! that session alone (started in a private folder, never its `cwd`: `server_code.rs`), and
//! what it may not pass refused before anything starts; `authenticate`; a session resumed in a new process; a compaction told to a client
//! that takes compaction updates.

use agent_client_protocol::Agent;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthMethod, AuthenticateRequest, ClientCapabilities, ClientSessionCapabilities, CompactionCapabilities,
    CompactionStatus, ContentBlock, EnvVariable, ErrorCode, InitializeRequest, McpServer, McpServerSse,
    McpServerStdio, NewSessionRequest, NewSessionResponse, PromptRequest, ResumeSessionRequest,
    SessionUpdate, StopReason,
};
use serde_json::Value;

use crate::support::acp_client::{deployment, open, prompt, with_client};
use crate::support::mcp::mcp_servers;
use crate::support::{FakeModel, Reply, plugin_block};

/// server-everything started over stdio as `name`, by its script's absolute path.
fn everything(name: &str) -> McpServer {
    McpServer::Stdio(
        McpServerStdio::new(name, "node")
            .args(vec![mcp_servers().everything.display().to_string(), "stdio".into()])
            .env(vec![EnvVariable::new("EDITOR_GIVEN", "from-the-editor")]),
    )
}

/// The names of the tools a model request offered.
fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editors_mcp_server_serves_its_session_alone_with_the_values_given() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("mcp__editor__get-env", "{}"));
    model.push(Reply::text("I read the environment."));
    model.push(Reply::text("No servers here."));
    let dir = deployment(&model, &plugin_block("todo", ""));
    let server_dir = mcp_servers().everything.parent().expect("the script's folder").to_owned();
    let (stops, _seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let _ = open(&cx, &server_dir).await;
        let with_server: NewSessionResponse = cx
            .send_request(NewSessionRequest::new(&server_dir).mcp_servers(vec![everything("editor")]))
            .block_task()
            .await
            .expect("session/new with a server");
        let first = prompt(&cx, &with_server, "what is in your environment?").await;
        let without: NewSessionResponse =
            cx.send_request(NewSessionRequest::new(&server_dir)).block_task().await.expect("session/new");
        let second = prompt(&cx, &without, "and here?").await;
        (first, second)
    })
    .await;
    assert_eq!(stops, (StopReason::EndTurn, StopReason::EndTurn));

    let requests = model.requests();
    assert_eq!(requests.len(), 3, "two model calls in the first session, one in the second");
    assert!(
        offered(&requests[0]).contains(&"mcp__editor__get-env".to_owned()),
        "{:?}",
        offered(&requests[0])
    );
    let tool_result = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .expect("the tool's result went back to the model");
    assert!(
        tool_result.contains("from-the-editor"),
        "the value the editor gave reached the server: {tool_result}"
    );
    assert!(
        !tool_result.contains("AGENT_HOST_TEST_KEY"),
        "nothing else of the host's environment did: {tool_result}"
    );
    assert!(
        !offered(&requests[2]).iter().any(|tool| tool.starts_with("mcp__editor__")),
        "another session is offered none of its tools: {:?}",
        offered(&requests[2])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_the_host_cannot_take_are_refused_naming_why_and_the_agent_serves_on() {
    let model = FakeModel::start().await;
    let dir = deployment(&model, "");
    let path = dir.path().to_owned();
    let (refusals, _seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let _ = open(&cx, &path).await;
        let mut refusals = Vec::new();
        let requests = [
            NewSessionRequest::new(&path).mcp_servers(vec![everything("twice"), everything("twice")]),
            NewSessionRequest::new(&path)
                .mcp_servers(vec![McpServer::Sse(McpServerSse::new("old", "http://127.0.0.1:9/sse"))]),
            NewSessionRequest::new(&path).mcp_servers(vec![everything("mcp__sneaky")]),
            NewSessionRequest::new("relative/folder"),
        ];
        for request in requests {
            let error = cx.send_request(request).block_task().await.expect_err("refused");
            refusals.push((error.code, error.data.map(|d| d.to_string()).unwrap_or_default()));
        }
        let still: NewSessionResponse =
            cx.send_request(NewSessionRequest::new(&path)).block_task().await.expect("the agent serves on");
        assert!(!still.session_id.0.is_empty());
        refusals
    })
    .await;
    let invalid_params = ErrorCode::InvalidParams;
    assert!(refusals.iter().all(|(code, _)| *code == invalid_params), "{refusals:#?}");
    let reasons: Vec<&str> = refusals.iter().map(|(_, data)| data.as_str()).collect();
    assert!(reasons[0].contains("`twice`: it is given twice"), "{reasons:?}");
    assert!(reasons[1].contains("`old`: the SSE transport is not supported"), "{reasons:?}");
    assert!(reasons[2].contains("must not hold `__`"), "{reasons:?}");
    assert!(reasons[3].contains("`relative/folder` is not an absolute path"), "{reasons:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authenticate_says_whether_the_model_keys_variable_is_set_and_names_it_when_not() {
    let model = FakeModel::start().await;
    // Two deployments: one names the variable the agent is started with, one a variable unset.
    let with_key = deployment(&model, "");
    let without_key = deployment(&model, "");
    let config = without_key.path().join("config.toml");
    let text =
        std::fs::read_to_string(&config).unwrap().replace("AGENT_HOST_TEST_KEY", "AGENT_HOST_UNSET_KEY");
    std::fs::write(&config, text).unwrap();

    let authenticate = async |cx: ConnectionTo<Agent>, _seen| {
        let init = cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await.unwrap();
        let methods: Vec<String> = init
            .auth_methods
            .iter()
            .map(|method| match method {
                AuthMethod::Agent(agent) => agent.id.0.to_string(),
                other => format!("{other:?}"),
            })
            .collect();
        let answer = cx.send_request(AuthenticateRequest::new("model-key")).block_task().await;
        let unknown = cx.send_request(AuthenticateRequest::new("password")).block_task().await;
        (methods, answer.map(|_| ()), unknown.map(|_| ()))
    };
    let ((methods, answer, unknown), _) = with_client(with_key.path(), vec![], authenticate).await;
    assert_eq!(methods, ["model-key"]);
    assert!(answer.is_ok(), "the key's variable is set: {answer:?}");
    let unknown = unknown.expect_err("no such method");
    assert!(unknown.data.unwrap().to_string().contains("no auth method password"));

    let ((_, answer, _), _) = with_client(without_key.path(), vec![], authenticate).await;
    let refused = answer.expect_err("the key's variable is unset");
    assert_eq!(refused.code, ErrorCode::AuthRequired);
    assert!(refused.data.unwrap().to_string().contains("set AGENT_HOST_UNSET_KEY"), "names the variable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_resumes_in_a_new_process_without_a_replay_and_goes_on_from_its_history() {
    let model = FakeModel::start().await;
    model.push(Reply::text("first answer"));
    model.push(Reply::text("second answer"));
    let dir = deployment(&model, &plugin_block("todo", ""));
    let path = dir.path().to_owned();
    let (id, _) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        assert_eq!(prompt(&cx, &session, "first question").await, StopReason::EndTurn);
        session.session_id
    })
    .await;

    let path = dir.path().to_owned();
    let resumed_id = id.clone();
    let (unknown, seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await.unwrap();
        let unknown = cx.send_request(ResumeSessionRequest::new("no-such-session", &path)).block_task().await;
        cx.send_request(ResumeSessionRequest::new(resumed_id.clone(), &path))
            .block_task()
            .await
            .expect("session/resume");
        let request = PromptRequest::new(resumed_id, vec![ContentBlock::from("second question".to_owned())]);
        let stop = cx.send_request(request).block_task().await.expect("a prompt in the resumed session");
        assert_eq!(stop.stop_reason, StopReason::EndTurn);
        unknown.map(|_| ())
    })
    .await;
    let unknown = unknown.expect_err("an unknown session is refused");
    assert!(unknown.data.unwrap().to_string().contains("no session no-such-session"));
    // Resuming replays nothing: the only user text the client saw is none, the reply is the new one.
    let updates = seen.updates();
    assert!(!updates.iter().any(|u| matches!(u, SessionUpdate::UserMessageChunk(_))), "{updates:#?}");
    let replies: String = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                ContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(replies, "second answer");
    // The model was sent the first exchange with the second question: the history went on.
    let second = &model.requests()[1];
    let said: Vec<String> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user" || m["role"] == "assistant")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(said[0].starts_with("first question"), "{said:?}");
    assert_eq!(said[1], "first answer");
    assert!(said[2].starts_with("second question"), "{said:?}");
}

/// A deployment whose window makes `/compact` truncate after a few turns.
fn compacting_deployment(model: &FakeModel) -> tempfile::TempDir {
    let dir = deployment(model, "");
    let config = dir.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap().replacen(
        "model = \"fake\"\n",
        "model = \"fake\"\ncontext_window = 100000\nmax_output_tokens = 500\n",
        1,
    );
    std::fs::write(&config, text).unwrap();
    dir
}

/// Six short turns, then `/compact`, by a client that says (or not) that it takes compaction
/// updates; the compaction updates it was sent.
async fn compact_after_six_turns(
    model: &FakeModel,
    dir: &std::path::Path,
    takes_them: bool,
) -> Vec<SessionUpdate> {
    model.fallback(Reply::text("ok"));
    let path = dir.to_owned();
    let (_, seen) = with_client(dir, vec![], async move |cx, _seen| {
        let mut capabilities = ClientCapabilities::new();
        if takes_them {
            capabilities = capabilities
                .session(ClientSessionCapabilities::new().compaction(CompactionCapabilities::new()));
        }
        let init = InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities);
        cx.send_request(init).block_task().await.unwrap();
        let session: NewSessionResponse =
            cx.send_request(NewSessionRequest::new(&path)).block_task().await.expect("session/new");
        for n in 0..6 {
            assert_eq!(prompt(&cx, &session, &format!("prompt {n}")).await, StopReason::EndTurn);
        }
        assert_eq!(prompt(&cx, &session, "/compact").await, StopReason::EndTurn);
    })
    .await;
    seen.updates().into_iter().filter(|u| matches!(u, SessionUpdate::CompactionUpdate(_))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_is_a_compaction_update_for_a_client_that_takes_them_and_for_no_other() {
    let model = FakeModel::start().await;
    let dir = compacting_deployment(&model);
    let sent = compact_after_six_turns(&model, dir.path(), true).await;
    let [SessionUpdate::CompactionUpdate(update)] = &sent[..] else {
        panic!("one compaction update: {sent:#?}")
    };
    assert_eq!(update.status, CompactionStatus::Completed);
    let summary = serde_json::to_string(&update.summary).unwrap();
    assert!(summary.contains("truncate: dropped the "), "what was done: {summary}");

    let dir = compacting_deployment(&model);
    assert_eq!(compact_after_six_turns(&model, dir.path(), false).await, [], "unasked, none is sent");
}
