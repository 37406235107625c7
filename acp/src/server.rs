//! The connection and its handlers. Handlers run in the dispatch loop, so anything that
//! waits on a session (a turn, a switch) runs in a task of its own and answers from there.
//!
//! Authentication: one method, `model-key`, meaning "the deployment's model key is present
//! in the environment variable the config names". The host keeps no accounts; the editor
//! sets the variable in the agent's environment, and `authenticate` says truthfully whether
//! it is there.

use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    CancelNotification, CloseSessionRequest, CloseSessionResponse, Implementation, InitializeRequest,
    InitializeResponse, ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities,
    SessionConfigOptionValue, SessionInfo, SessionListCapabilities, SessionNotification,
    SessionResumeCapabilities, SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::{Agent, Client, Error, Responder, V1};

use super::history;
use super::mcp;
use super::prompt;
use super::sessions::{Open, Sessions, internal};
use super::updates::Updates;
use super::views::Switch;
use agent_host::agent::Host;
use agent_host::state::SessionEntry;
use agent_host::unpoisoned::LockUnpoisoned as _;

const AUTH_METHOD: &str = "model-key";
/// Sessions `session/list` reads at most.
const LIST_LIMIT: usize = 1_000;

struct State {
    host: Arc<Host>,
    sessions: Sessions,
    /// Whether the client said in `initialize` that it takes `compaction_update`s.
    compaction_updates: std::sync::atomic::AtomicBool,
}

pub async fn serve(host: Arc<Host>) -> anyhow::Result<()> {
    let state =
        Arc::new(State { host, sessions: Sessions::default(), compaction_updates: Default::default() });
    let (s1, s2, s3, s4, s5, s6, s7) = (
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
    );
    let (s8, s9, s10, s11) = (state.clone(), state.clone(), state.clone(), state);
    Agent
        .v1()
        .name("agent-host")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                responder.respond(initialize(&s1, &request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: AuthenticateRequest, responder, _cx| {
                let key_env = s2.host.config().model.key_env().to_owned();
                if &*request.method_id.0 != AUTH_METHOD {
                    return responder.respond_with_error(
                        Error::invalid_params().data(format!("no auth method {}", request.method_id.0)),
                    );
                }
                match std::env::var(&key_env) {
                    Ok(value) if !value.is_empty() => responder.respond(AuthenticateResponse::new()),
                    _ => responder.respond_with_error(
                        Error::auth_required().data(format!("set {key_env} in the agent's environment")),
                    ),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                let requested = match mcp::requested(&s3.host, &request.mcp_servers, &request.cwd) {
                    Ok(requested) => requested,
                    Err(error) => return responder.respond_with_error(error),
                };
                // Starting the editor's servers takes time: off the dispatch loop.
                let state = s3.clone();
                tokio::spawn(async move {
                    let open = match state.sessions.create(&state.host).await {
                        Ok(open) => open,
                        Err(error) => return responder.respond_with_error(error),
                    };
                    requested.attach(&mut *open.handle.lock().await).await;
                    let (modes, options) = {
                        let shown = open.shown.lock_unpoisoned();
                        (shown.modes(), shown.config_options())
                    };
                    responder.respond(
                        NewSessionResponse::new(open.id.clone()).modes(modes).config_options(Some(options)),
                    )?;
                    announce_commands(&state.host, &open, &cx);
                    Ok::<_, Error>(())
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx| match s4.sessions.get(&request.session_id.0) {
                Ok(open) => {
                    let compaction = s4.compaction_updates.load(std::sync::atomic::Ordering::Relaxed);
                    prompt::start(s4.host.clone(), open, request, responder, cx, compaction)
                }
                Err(error) => responder.respond_with_error(error),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                if let Ok(open) = s5.sessions.get(&notification.session_id.0) {
                    prompt::cancel(&open);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, cx| {
                let open = match s6.sessions.get(&request.session_id.0) {
                    Ok(open) => open,
                    Err(error) => return responder.respond_with_error(error),
                };
                let switch = open.shown.lock_unpoisoned().mode_switch();
                let value = request.mode_id.0.to_string();
                switch_choice(
                    s6.host.clone(),
                    open,
                    switch,
                    value,
                    responder,
                    cx,
                    SetSessionModeResponse::new,
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest, responder, cx| {
                let open = match s7.sessions.get(&request.session_id.0) {
                    Ok(open) => open,
                    Err(error) => return responder.respond_with_error(error),
                };
                let SessionConfigOptionValue::ValueId { value } = &request.value else {
                    return responder
                        .respond_with_error(Error::invalid_params().data("a choice takes a value id"));
                };
                let (switch, value) = {
                    let shown = open.shown.lock_unpoisoned();
                    (shown.config_switch(&request.config_id.0), value.0.to_string())
                };
                let host = s7.host.clone();
                let opened = open.clone();
                switch_choice(host, open, switch, value, responder, cx, move || {
                    let options = opened.shown.lock_unpoisoned().config_options();
                    SetSessionConfigOptionResponse::new(options)
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                let requested = match mcp::requested(&s8.host, &request.mcp_servers, &request.cwd) {
                    Ok(requested) => requested,
                    Err(error) => return responder.respond_with_error(error),
                };
                let open = match s8.sessions.open_stored(&s8.host, &request.session_id.0).await {
                    Ok(open) => open,
                    Err(error) => return responder.respond_with_error(error),
                };
                // The replay waits for the session (a turn may hold it): off the dispatch loop.
                let host = s8.host.clone();
                tokio::spawn(async move {
                    let replayed = {
                        let mut session = open.handle.lock().await;
                        requested.attach(&mut session).await;
                        history::replay(&host, session.history())
                    };
                    // A replay compacts nothing.
                    let updates = Updates::new(host.clone(), cx, open.id.clone(), open.shown.clone(), false);
                    for update in replayed {
                        updates.send(update);
                    }
                    let (plan, modes, options) = {
                        let shown = open.shown.lock_unpoisoned();
                        (shown.plan(), shown.modes(), shown.config_options())
                    };
                    if !plan.entries.is_empty() {
                        updates.send(SessionUpdate::Plan(plan));
                    }
                    let _ = responder
                        .respond(LoadSessionResponse::new().modes(modes).config_options(Some(options)));
                    updates.send(SessionUpdate::AvailableCommandsUpdate(super::commands::available(&host)));
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ResumeSessionRequest, responder, _cx| {
                let requested = match mcp::requested(&s9.host, &request.mcp_servers, &request.cwd) {
                    Ok(requested) => requested,
                    Err(error) => return responder.respond_with_error(error),
                };
                let open = match s9.sessions.open_stored(&s9.host, &request.session_id.0).await {
                    Ok(open) => open,
                    Err(error) => return responder.respond_with_error(error),
                };
                // Attaching waits for the session (a turn may hold it): off the dispatch loop.
                tokio::spawn(async move {
                    requested.attach(&mut *open.handle.lock().await).await;
                    let shown = open.shown.lock_unpoisoned();
                    let options = shown.config_options();
                    responder.respond(
                        ResumeSessionResponse::new().modes(shown.modes()).config_options(Some(options)),
                    )
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: ListSessionsRequest, responder, _cx| match s10
                .host
                .sessions()
                .store()
                .entries(LIST_LIMIT)
            {
                Ok(entries) => {
                    let cwd = std::env::current_dir().unwrap_or_default();
                    let sessions = entries.into_iter().map(|entry| session_info(entry, &cwd)).collect();
                    responder.respond(ListSessionsResponse::new(sessions))
                }
                Err(error) => responder.respond_with_error(internal(error)),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CloseSessionRequest, responder, _cx| match s11
                .sessions
                .close(&request.session_id.0)
            {
                Ok(()) => responder.respond(CloseSessionResponse::new()),
                Err(error) => responder.respond_with_error(error),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(super::transport::stdio())
        .await
        .map_err(|error| anyhow::anyhow!("the ACP connection failed: {error}"))
}

/// A stored session as `session/list` gives it: its first prompt as the title, its last use
/// as RFC 3339 text. The host's sessions belong to no folder; `cwd` is the agent's.
fn session_info(entry: SessionEntry, cwd: &std::path::Path) -> SessionInfo {
    let updated = jiff::Timestamp::from_second(entry.updated_at).ok().map(|at| at.to_string());
    SessionInfo::new(entry.id, cwd.to_path_buf()).title(entry.title).updated_at(updated)
}

/// Tells the client which slash commands session `open` takes.
fn announce_commands(host: &Host, open: &Open, cx: &ConnectionTo<Client>) {
    let update = SessionUpdate::AvailableCommandsUpdate(super::commands::available(host));
    if let Err(error) = cx.send_notification(SessionNotification::new(open.id.clone(), update)) {
        tracing::debug!(error = %error, "the commands could not be announced");
    }
}

fn initialize(state: &State, request: &InitializeRequest) -> InitializeResponse {
    let compaction =
        request.client_capabilities.session.as_ref().is_some_and(|session| session.compaction.is_some());
    state.compaction_updates.store(compaction, std::sync::atomic::Ordering::Relaxed);
    let key_env = state.host.config().model.key_env().to_owned();
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .session_capabilities(
                    SessionCapabilities::new()
                        .list(SessionListCapabilities::new())
                        .resume(SessionResumeCapabilities::new())
                        .close(SessionCloseCapabilities::new()),
                )
                .prompt_capabilities(PromptCapabilities::new())
                // Started servers (stdio) always; streamable HTTP too; not the old SSE transport.
                .mcp_capabilities(McpCapabilities::new().http(true)),
        )
        .auth_methods(vec![AuthMethod::Agent(AuthMethodAgent::new(AUTH_METHOD, "Model key").description(
            format!("the deployment's model key, read from {key_env} in the agent's environment"),
        ))])
        .agent_info(Implementation::new("agent-host", env!("CARGO_PKG_VERSION")))
}

/// Runs the command line that moves `switch` to `value` in a task of its own (it waits for
/// the session), and answers with `answer()` once it ran.
fn switch_choice<R: agent_client_protocol::JsonRpcResponse + Send + 'static>(
    host: Arc<Host>,
    open: Arc<Open>,
    switch: Option<Switch>,
    value: String,
    responder: Responder<R, V1>,
    cx: ConnectionTo<Client>,
    answer: impl FnOnce() -> R + Send + 'static,
) -> Result<(), Error> {
    let line = switch.and_then(|switch| open.shown.lock_unpoisoned().switch_line(&switch, &value));
    let Some(line) = line else {
        return responder.respond_with_error(Error::invalid_params().data(format!("{value} is not a value this session can be switched to (a choice only the model moves takes none)")));
    };
    tokio::spawn(async move {
        // A choice's switch compacts nothing.
        let updates = Updates::new(host.clone(), cx, open.id.clone(), open.shown.clone(), false);
        let ran = {
            let mut session = open.handle.lock().await;
            let ran = host.command(&mut session, &line, &updates).await;
            host.refresh_views(&mut session, &updates).await;
            ran
        };
        let sent = match ran {
            Ok(_) => responder.respond(answer()),
            Err(error) => responder.respond_with_error(Error::invalid_params().data(error)),
        };
        if let Err(error) = sent {
            tracing::debug!(error = %error, "a switch's answer could not be sent");
        }
    });
    Ok(())
}
