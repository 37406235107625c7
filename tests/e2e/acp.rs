//! `agent-host acp`: the real binary as an ACP agent on stdio, driven by the protocol crate's
//! own client side against the fake model: streaming, tool calls, plan and modes from the
//! views, permissions, cancel, bad input.

use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, NewSessionResponse, PermissionOptionKind,
    PlanEntryStatus, PromptRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, SessionUpdate,
    SetSessionModeRequest, StopReason, ToolCallStatus, ToolKind,
};
use agent_client_protocol::{Agent, ByteStreams, Client};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::support::{FakeModel, Reply, config_text, plugin_block};

/// A deployment folder with `plugins`, pointing at `model`.
fn deployment(model: &FakeModel, plugins: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), plugins)).unwrap();
    dir
}

/// `agent-host acp --config <dir>/config.toml`, stdio piped, killed when dropped.
fn spawn_agent(dir: &Path) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("AGENT_HOST_TEST_KEY", "test-key")
        .arg("acp")
        .arg("--config")
        .arg(dir.join("config.toml"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts")
}

/// What the client saw: every session update in order, and every permission request.
#[derive(Default, Clone)]
struct Seen {
    updates: Arc<Mutex<Vec<SessionUpdate>>>,
    asked: Arc<Mutex<Vec<RequestPermissionRequest>>>,
}

impl Seen {
    fn updates(&self) -> Vec<SessionUpdate> {
        self.updates.lock().unwrap().clone()
    }
}

/// Runs `script` as an ACP client of a fresh agent on `dir`, answering each permission
/// request with the next of `answers` (an option kind, or `None` for a cancelled request).
async fn with_client<T: Send + 'static>(
    dir: &Path,
    answers: Vec<Option<PermissionOptionKind>>,
    script: impl AsyncFnOnce(ConnectionTo<Agent>, Seen) -> T + Send + 'static,
) -> (T, Seen) {
    let mut child = spawn_agent(dir);
    let transport = ByteStreams::new(
        child.stdin.take().unwrap().compat_write(),
        child.stdout.take().unwrap().compat(),
    );
    let seen = Seen::default();
    let (on_update, on_ask, in_script) = (seen.clone(), seen.clone(), seen.clone());
    let answers = Arc::new(Mutex::new(answers.into_iter()));
    let out = Arc::new(Mutex::new(None));
    let out_in = out.clone();
    Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                on_update.updates.lock().unwrap().push(notification.update);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                let answer = answers.lock().unwrap().next().expect("a permission request the test expects");
                let outcome = match answer {
                    Some(kind) => {
                        let option = request.options.iter().find(|option| option.kind == kind).expect("offered");
                        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.option_id.clone()))
                    }
                    None => RequestPermissionOutcome::Cancelled,
                };
                on_ask.asked.lock().unwrap().push(request);
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            let value = script(cx, in_script).await;
            *out_in.lock().unwrap() = Some(value);
            Ok(())
        })
        .await
        .expect("the connection serves the script");
    drop(child);
    let value = out.lock().unwrap().take().expect("the script ran");
    (value, seen)
}

async fn open(cx: &ConnectionTo<Agent>, dir: &Path) -> NewSessionResponse {
    let init = cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await.expect("initialize");
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert!(init.agent_capabilities.load_session);
    cx.send_request(NewSessionRequest::new(dir)).block_task().await.expect("session/new")
}

async fn prompt(cx: &ConnectionTo<Agent>, session: &NewSessionResponse, text: &str) -> StopReason {
    let request = PromptRequest::new(session.session_id.clone(), vec![ContentBlock::from(text.to_owned())]);
    cx.send_request(request).block_task().await.expect("session/prompt").stop_reason
}

fn message_text(updates: &[SessionUpdate]) -> String {
    updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                ContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_prompt_streams_the_reply_and_each_tool_call_then_ends_the_turn() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("todos_add", r#"{"todos":[{"title":"write the tests"}]}"#).reasoning("plan first"));
    model.push(Reply::text("All planned."));
    // The todo list's completion loop asks again while an entry is open.
    model.fallback(Reply::text(""));
    let dir = deployment(&model, &plugin_block("todo", ""));
    let path = dir.path().to_owned();
    let (stop, seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        prompt(&cx, &session, "plan it").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let updates = seen.updates();
    assert_eq!(message_text(&updates), "All planned.");
    assert!(
        updates.iter().any(|update| matches!(update, SessionUpdate::AgentThoughtChunk(chunk)
            if matches!(&chunk.content, ContentBlock::Text(text) if text.text == "plan first"))),
        "{updates:#?}"
    );
    let call = updates
        .iter()
        .find_map(|update| match update {
            SessionUpdate::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .expect("a tool_call");
    assert_eq!(call.title, "todos_add");
    assert_eq!(call.status, ToolCallStatus::Pending);
    assert_ne!(call.kind, ToolKind::Read, "adding todos changes the list");
    let statuses: Vec<_> = updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::ToolCallUpdate(update) if update.tool_call_id == call.tool_call_id => {
                Some((update.fields.status, update.fields.content.clone().map(|content| content.len())))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        [(Some(ToolCallStatus::InProgress), None), (Some(ToolCallStatus::Completed), Some(1))],
        "{updates:#?}"
    );
}

/// The plans sent, each as (title, status) pairs.
fn plans(updates: &[SessionUpdate]) -> Vec<Vec<(String, PlanEntryStatus)>> {
    updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::Plan(plan) => {
                Some(plan.entries.iter().map(|entry| (entry.content.clone(), entry.status.clone())).collect())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_todo_list_arrives_as_the_whole_plan_after_each_change() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("todos_add", r#"{"todos":[{"title":"a"},{"title":"b"}]}"#));
    model.push(Reply::tool("todos_complete", r#"{"items":[{"id":1,"reason":"done"}]}"#));
    model.push(Reply::text("one done"));
    model.fallback(Reply::text(""));
    let dir = deployment(&model, &plugin_block("todo", ""));
    let path = dir.path().to_owned();
    let (stop, seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        prompt(&cx, &session, "do a and b").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let plans = plans(&seen.updates());
    let pending = PlanEntryStatus::Pending;
    assert_eq!(
        plans,
        [
            vec![("a".to_owned(), pending.clone()), ("b".to_owned(), pending.clone())],
            vec![("a".to_owned(), PlanEntryStatus::Completed), ("b".to_owned(), pending)],
        ]
    );
}

#[tokio::test]
async fn agent_modes_are_the_sessions_modes_and_set_mode_switches() {
    let model = FakeModel::start().await;
    let dir = deployment(&model, &plugin_block("agent-mode", ""));
    let path = dir.path().to_owned();
    let ((before, ids), seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        let modes = session.modes.clone().expect("modes");
        let ids: Vec<String> = modes.available_modes.iter().map(|mode| mode.id.0.to_string()).collect();
        let other = ids.iter().find(|id| **id != *modes.current_mode_id.0).unwrap().clone();
        cx.send_request(SetSessionModeRequest::new(session.session_id.clone(), other.clone()))
            .block_task()
            .await
            .expect("session/set_mode");
        let options = session.config_options.clone().expect("config options");
        assert!(
            options.iter().any(|option| option.category
                == Some(agent_client_protocol::v1::schema::SessionConfigOptionCategory::Mode)),
            "{options:#?}"
        );
        ((modes.current_mode_id.0.to_string(), other), ids)
    })
    .await;
    assert_eq!(ids, ["plan", "execute"], "agent-mode's default modes");
    assert_eq!(before.0, "plan");
    let switched: Vec<String> = seen
        .updates()
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::CurrentModeUpdate(update) => Some(update.current_mode_id.0.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(switched, [before.1]);
}
