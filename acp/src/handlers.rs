//! What the agent does for each request and notification of the protocol, one method of
//! [`State`] each; `server.rs` wires them to the connection. A handler runs in the dispatch
//! loop, so anything that waits on a session (a turn, a switch, attaching servers) runs in a
//! task of its own and answers from there.

use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    CancelNotification, CloseSessionRequest, CloseSessionResponse, Implementation, InitializeRequest,
    InitializeResponse, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionConfigOptionValue,
    SessionInfo, SessionListCapabilities, SessionNotification, SessionResumeCapabilities, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::{Client, Error, Responder, V1};

use super::history;
use super::mcp;
use super::prompt;
use super::sessions::{Open, Sessions, internal};
use super::takes::Takes;
use super::updates::Updates;
use super::views::Switch;
use agent_host::agent::Host;
use agent_host::state::SessionEntry;
use agent_host::unpoisoned::LockUnpoisoned as _;

/// Authentication: one method, meaning "the deployment's model key is present in the
/// environment variable the config names". The host keeps no accounts; the editor sets the
/// variable in the agent's environment, and `authenticate` says truthfully whether it is there.
const AUTH_METHOD: &str = "model-key";
/// Sessions `session/list` reads at most.
const LIST_LIMIT: usize = 1_000;

/// What every handler shares: the host, the open sessions, what the client said it takes.
pub(super) struct State {
    host: Arc<Host>,
    sessions: Sessions,
    /// What the client said in `initialize` that it takes.
    takes: Mutex<Takes>,
}

type Answer = Result<(), Error>;

/// The value of `result`; an error is the handler's answer, through `responder`.
macro_rules! or_answer {
    ($result:expr, $responder:ident) => {
        match $result {
            Ok(value) => value,
            Err(error) => return $responder.respond_with_error(error),
        }
    };
}

impl State {
    pub(super) fn new(host: Arc<Host>) -> Self {
        Self { host, sessions: Sessions::default(), takes: Mutex::default() }
    }

    pub(super) fn initialize(&self, request: &InitializeRequest) -> InitializeResponse {
        *self.takes.lock_unpoisoned() = Takes::of(&request.client_capabilities);
        let key_env = self.host.config().model.key_env().to_owned();
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
            .auth_methods(vec![AuthMethod::Agent(
                AuthMethodAgent::new(AUTH_METHOD, "Model key").description(format!(
                    "the deployment's model key, read from {key_env} in the agent's environment"
                )),
            )])
            .agent_info(Implementation::new("agent-host", env!("CARGO_PKG_VERSION")))
    }

    pub(super) fn authenticate(
        &self,
        request: &AuthenticateRequest,
        responder: Responder<AuthenticateResponse, V1>,
    ) -> Answer {
        let key_env = self.host.config().model.key_env().to_owned();
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
    }

    pub(super) fn new_session(
        self: &Arc<Self>,
        request: &NewSessionRequest,
        responder: Responder<NewSessionResponse, V1>,
        cx: ConnectionTo<Client>,
    ) -> Answer {
        let requested = or_answer!(mcp::requested(&self.host, &request.mcp_servers, &request.cwd), responder);
        // Starting the editor's servers takes time: off the dispatch loop.
        let state = self.clone();
        tokio::spawn(async move {
            let open = or_answer!(state.sessions.create(&state.host).await, responder);
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
    }

    pub(super) fn prompt(
        &self,
        request: PromptRequest,
        responder: Responder<agent_client_protocol::v1::schema::PromptResponse, V1>,
        cx: ConnectionTo<Client>,
    ) -> Answer {
        match self.sessions.get(&request.session_id.0) {
            Ok(open) => {
                let takes = *self.takes.lock_unpoisoned();
                prompt::start(self.host.clone(), open, request, responder, cx, takes)
            }
            Err(error) => responder.respond_with_error(error),
        }
    }

    /// Cancels the turn running in the session named, or the child agent named alone (its
    /// announcement says it may be): its parent's turn goes on, told the child was cancelled.
    pub(super) fn cancel(&self, notification: &CancelNotification) {
        let id = &notification.session_id.0;
        match self.sessions.get(id) {
            Ok(open) => prompt::cancel(&open),
            Err(_) => {
                self.host.cancel_child(id);
            }
        }
    }

    pub(super) fn set_mode(
        &self,
        request: &SetSessionModeRequest,
        responder: Responder<SetSessionModeResponse, V1>,
        cx: ConnectionTo<Client>,
    ) -> Answer {
        let open = or_answer!(self.sessions.get(&request.session_id.0), responder);
        let switch = open.shown.lock_unpoisoned().mode_switch();
        let value = request.mode_id.0.to_string();
        switch_choice(self.host.clone(), open, switch, value, responder, cx, SetSessionModeResponse::new)
    }

    pub(super) fn set_config_option(
        &self,
        request: &SetSessionConfigOptionRequest,
        responder: Responder<SetSessionConfigOptionResponse, V1>,
        cx: ConnectionTo<Client>,
    ) -> Answer {
        let open = or_answer!(self.sessions.get(&request.session_id.0), responder);
        let SessionConfigOptionValue::ValueId { value } = &request.value else {
            return responder.respond_with_error(Error::invalid_params().data("a choice takes a value id"));
        };
        let (switch, value) = {
            let shown = open.shown.lock_unpoisoned();
            (shown.config_switch(&request.config_id.0), value.0.to_string())
        };
        let opened = open.clone();
        switch_choice(self.host.clone(), open, switch, value, responder, cx, move || {
            let options = opened.shown.lock_unpoisoned().config_options();
            SetSessionConfigOptionResponse::new(options)
        })
    }

    pub(super) async fn load_session(
        &self,
        request: &LoadSessionRequest,
        responder: Responder<LoadSessionResponse, V1>,
        cx: ConnectionTo<Client>,
    ) -> Answer {
        let requested = or_answer!(mcp::requested(&self.host, &request.mcp_servers, &request.cwd), responder);
        let open = or_answer!(self.sessions.open_stored(&self.host, &request.session_id.0).await, responder);
        // The replay waits for the session (a turn may hold it): off the dispatch loop.
        let host = self.host.clone();
        tokio::spawn(async move {
            let replayed = {
                let mut session = open.handle.lock().await;
                requested.attach(&mut session).await;
                history::replay(&host, session.history())
            };
            // A replay compacts nothing and runs no child.
            let updates = plain_updates(&host, cx, &open);
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
            let _ = responder.respond(LoadSessionResponse::new().modes(modes).config_options(Some(options)));
            updates.send(SessionUpdate::AvailableCommandsUpdate(super::commands::available(&host)));
        });
        Ok(())
    }

    pub(super) async fn resume_session(
        &self,
        request: &ResumeSessionRequest,
        responder: Responder<ResumeSessionResponse, V1>,
    ) -> Answer {
        let requested = or_answer!(mcp::requested(&self.host, &request.mcp_servers, &request.cwd), responder);
        let open = or_answer!(self.sessions.open_stored(&self.host, &request.session_id.0).await, responder);
        // Attaching waits for the session (a turn may hold it): off the dispatch loop.
        tokio::spawn(async move {
            requested.attach(&mut *open.handle.lock().await).await;
            let shown = open.shown.lock_unpoisoned();
            let options = shown.config_options();
            responder.respond(ResumeSessionResponse::new().modes(shown.modes()).config_options(Some(options)))
        });
        Ok(())
    }

    pub(super) fn list_sessions(&self, responder: Responder<ListSessionsResponse, V1>) -> Answer {
        match self.host.sessions().store().entries(LIST_LIMIT) {
            Ok(entries) => {
                let cwd = std::env::current_dir().unwrap_or_default();
                let sessions = entries.into_iter().map(|entry| session_info(entry, &cwd)).collect();
                responder.respond(ListSessionsResponse::new(sessions))
            }
            Err(error) => responder.respond_with_error(internal(error)),
        }
    }

    pub(super) fn close_session(
        &self,
        request: &CloseSessionRequest,
        responder: Responder<CloseSessionResponse, V1>,
    ) -> Answer {
        match self.sessions.close(&request.session_id.0) {
            Ok(()) => responder.respond(CloseSessionResponse::new()),
            Err(error) => responder.respond_with_error(error),
        }
    }
}

/// A stored session as `session/list` gives it: its first prompt as the title, its last use
/// as RFC 3339 text. The host's sessions belong to no folder; `cwd` is the agent's.
fn session_info(entry: SessionEntry, cwd: &std::path::Path) -> SessionInfo {
    let updated = jiff::Timestamp::from_second(entry.updated_at).ok().map(|at| at.to_string());
    SessionInfo::new(entry.id, cwd.to_path_buf()).title(entry.title).updated_at(updated)
}

/// The updates of what is not a turn (a replay, a switch): nothing the client must opt in to.
fn plain_updates(host: &Arc<Host>, cx: ConnectionTo<Client>, open: &Open) -> Updates {
    Updates::new(
        host.clone(),
        cx,
        open.id.clone(),
        open.shown.clone(),
        Takes::default(),
        open.children.clone(),
    )
}

/// Tells the client which slash commands session `open` takes.
fn announce_commands(host: &Host, open: &Open, cx: &ConnectionTo<Client>) {
    let update = SessionUpdate::AvailableCommandsUpdate(super::commands::available(host));
    if let Err(error) = cx.send_notification(SessionNotification::new(open.id.clone(), update)) {
        tracing::debug!(error = %error, "the commands could not be announced");
    }
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
        // A choice's switch compacts nothing and runs no child.
        let updates = plain_updates(&host, cx, &open);
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
