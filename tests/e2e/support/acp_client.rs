//! An ACP client for the tests: the protocol crate's own client side driving the real
//! `agent-host acp` binary over its stdio, recording every session update and permission
//! request it is sent.

use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, InitializeRequest, NewSessionRequest, NewSessionResponse,
    PermissionOptionKind, PromptRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, SessionUpdate, StopReason,
    ToolCallStatus, ToolCallUpdateFields,
};
use agent_client_protocol::{Agent, ByteStreams, Client};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::{FakeModel, config_text};

/// A deployment folder with `plugins`, pointing at `model`.
pub fn deployment(model: &FakeModel, plugins: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config_text(&model.url(), plugins)).unwrap();
    dir
}

/// `agent-host acp --config <dir>/config.toml`, stdio piped, killed when dropped. Its
/// temporary files go under `<dir>/tmp`: a process killed by signal cannot remove its own
/// (the private folder its MCP servers start in), and they go with the deployment folder.
pub fn spawn_agent(dir: &Path) -> tokio::process::Child {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).expect("a temporary folder in the deployment");
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env("TMPDIR", &tmp)
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

/// What the client saw: every session update in order (alone, and with the session it was
/// sent under), and every permission request.
#[derive(Default, Clone)]
pub struct Seen {
    pub updates: Arc<Mutex<Vec<SessionUpdate>>>,
    pub notifications: Arc<Mutex<Vec<SessionNotification>>>,
    pub asked: Arc<Mutex<Vec<RequestPermissionRequest>>>,
}

impl Seen {
    pub fn updates(&self) -> Vec<SessionUpdate> {
        self.updates.lock().unwrap().clone()
    }

    pub fn notifications(&self) -> Vec<SessionNotification> {
        self.notifications.lock().unwrap().clone()
    }
}

/// Runs `script` as an ACP client of a fresh agent on `dir`, answering each permission
/// request with the next of `answers` (an option kind, or `None` for a cancelled request).
pub async fn with_client<T: Send + 'static>(
    dir: &Path,
    answers: Vec<Option<PermissionOptionKind>>,
    script: impl AsyncFnOnce(ConnectionTo<Agent>, Seen) -> T + Send + 'static,
) -> (T, Seen) {
    let mut child = spawn_agent(dir);
    let transport =
        ByteStreams::new(child.stdin.take().unwrap().compat_write(), child.stdout.take().unwrap().compat());
    let seen = Seen::default();
    let (on_update, on_ask, in_script) = (seen.clone(), seen.clone(), seen.clone());
    let answers = Arc::new(Mutex::new(answers.into_iter()));
    let out = Arc::new(Mutex::new(None));
    let out_in = out.clone();
    Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                on_update.updates.lock().unwrap().push(notification.update.clone());
                on_update.notifications.lock().unwrap().push(notification);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                let answer = answers.lock().unwrap().next().expect("a permission request the test expects");
                let outcome = match answer {
                    Some(kind) => {
                        let option =
                            request.options.iter().find(|option| option.kind == kind).expect("offered");
                        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                            option.option_id.clone(),
                        ))
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

pub async fn open(cx: &ConnectionTo<Agent>, dir: &Path) -> NewSessionResponse {
    open_with(cx, dir, ClientCapabilities::new()).await
}

/// A session of a client that said it takes `capabilities`.
pub async fn open_with(
    cx: &ConnectionTo<Agent>,
    dir: &Path,
    capabilities: ClientCapabilities,
) -> NewSessionResponse {
    let init = InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities);
    let init = cx.send_request(init).block_task().await.expect("initialize");
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert!(init.agent_capabilities.load_session);
    cx.send_request(NewSessionRequest::new(dir)).block_task().await.expect("session/new")
}

pub async fn prompt(cx: &ConnectionTo<Agent>, session: &NewSessionResponse, text: &str) -> StopReason {
    let request = PromptRequest::new(session.session_id.clone(), vec![ContentBlock::from(text.to_owned())]);
    cx.send_request(request).block_task().await.expect("session/prompt").stop_reason
}

/// The text of the agent's message chunks among `updates`, joined.
pub fn message_text(updates: &[SessionUpdate]) -> String {
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

/// The update that finished each tool call (completed or failed), in order of the calls.
pub fn finished_calls(updates: &[SessionUpdate]) -> Vec<ToolCallUpdateFields> {
    updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::ToolCallUpdate(update)
                if matches!(
                    update.fields.status,
                    Some(ToolCallStatus::Completed | ToolCallStatus::Failed)
                ) =>
            {
                Some(update.fields.clone())
            }
            _ => None,
        })
        .collect()
}
