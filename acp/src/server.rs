//! The connection: each request and notification of the protocol wired to its handler (one
//! method of [`State`] each, in `handlers.rs`), over stdio.

use std::sync::Arc;

use agent_client_protocol::Agent;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, CloseSessionRequest, InitializeRequest, ListSessionsRequest,
    LoadSessionRequest, NewSessionRequest, PromptRequest, ResumeSessionRequest,
    SetSessionConfigOptionRequest, SetSessionModeRequest,
};
use agent_client_protocol::{on_receive_notification, on_receive_request};

use super::handlers::State;
use agent_host::agent::Host;

/// Serves the protocol on stdio until the client goes.
pub async fn serve(host: Arc<Host>) -> anyhow::Result<()> {
    let state = Arc::new(State::new(host));
    // Each handler owns a handle on the state.
    let with = || state.clone();
    Agent
        .v1()
        .name("agent-host")
        .on_receive_request(
            {
                let state = with();
                async move |request: InitializeRequest, responder, _cx| {
                    responder.respond(state.initialize(&request))
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let state = with();
                async move |request: AuthenticateRequest, responder, _cx| {
                    state.authenticate(&request, responder)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let state = with();
                async move |request: NewSessionRequest, responder, cx| {
                    state.new_session(&request, responder, cx)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let state = with();
                async move |request: PromptRequest, responder, cx| state.prompt(request, responder, cx)
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            {
                let state = with();
                async move |notification: CancelNotification, _cx| {
                    state.cancel(&notification);
                    Ok(())
                }
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            {
                let state = with();
                async move |request: SetSessionModeRequest, responder, cx| {
                    state.set_mode(&request, responder, cx)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let state = with();
                async move |request: SetSessionConfigOptionRequest, responder, cx| {
                    state.set_config_option(&request, responder, cx)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let state = with();
                async move |request: LoadSessionRequest, responder, cx| {
                    state.load_session(&request, responder, cx).await
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let state = with();
                async move |request: ResumeSessionRequest, responder, _cx| {
                    state.resume_session(&request, responder).await
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let state = with();
                async move |_request: ListSessionsRequest, responder, _cx| state.list_sessions(responder)
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let state = with();
                async move |request: CloseSessionRequest, responder, _cx| {
                    state.close_session(&request, responder)
                }
            },
            on_receive_request!(),
        )
        .connect_to(super::transport::stdio())
        .await
        .map_err(|error| anyhow::anyhow!("the ACP connection failed: {error}"))
}
