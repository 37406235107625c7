//! A turn over HTTP: started at once in a task of its own (the request returns `202`), its
//! events to the session's hub, its asks to the session's approver; one at a time per
//! session (`409`), `max_turns_per_principal` at a time per caller (`429`).

use std::sync::Arc;

use axum::http::StatusCode;

use super::api::{ApiError, TurnStarted};
use super::auth::Principal;
use super::state::{App, Open};
use agent_host::unpoisoned::LockUnpoisoned as _;

/// Why a prompt or a command waits: the running turn was asked to make way for it.
pub const RUNNING: &str = "a turn is running in this session; it grants no further continuation \
     and ends at its next one: send again after its turn_ended event";

pub fn start(
    app: &Arc<App>,
    principal: &Principal,
    open: &Arc<Open>,
    text: String,
) -> Result<TurnStarted, ApiError> {
    if app.shutdown.is_cancelled() {
        return Err(ApiError(StatusCode::SERVICE_UNAVAILABLE, "the server is shutting down".into()));
    }
    let mut running = open.turn.lock_unpoisoned();
    if running.as_ref().is_some_and(|task| !task.is_finished()) {
        open.input.mark();
        return Err(ApiError(StatusCode::CONFLICT, RUNNING.into()));
    }
    let slot = app.start_turn(&principal.name).ok_or_else(|| {
        ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "{} turns of yours are running, the most `[serve] max_turns_per_principal` allows",
                app.limits.max_turns_per_principal
            ),
        )
    })?;
    let turn = uuid::Uuid::new_v4().simple().to_string();
    let (app, open_for_task) = (app.clone(), open.clone());
    *running = Some(tokio::spawn(async move {
        // Held until the turn ends, or is dropped when cancelled.
        let _slot = slot;
        let open = open_for_task;
        let mut session = open.handle.lock().await;
        let sink = super::metrics::Metered::new(&*open.hub, &app.metrics);
        if let Err(error) = app.host.run_turn(&mut session, &text, &sink, &*open.approvals).await {
            tracing::warn!(session = %open.id, error = %error, "a turn over HTTP failed");
        }
    }));
    Ok(TurnStarted { turn })
}
