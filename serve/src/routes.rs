//! The API's handlers. Each takes the caller's [`Principal`] (401 without one) and answers
//! 404 for a session that is not the caller's, exactly as for one that does not exist.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

use super::api::*;
use super::auth::Principal;
use super::state::{App, internal};
use agent_host::agent::ApprovalAnswer;
use agent_host::unpoisoned::LockUnpoisoned as _;

impl FromRequestParts<Arc<App>> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Self::Rejection> {
        let header = parts.headers.get(axum::http::header::AUTHORIZATION).map(|value| value.as_bytes());
        app.principals.identify(header).ok_or_else(|| {
            ApiError(
                StatusCode::UNAUTHORIZED,
                "a valid bearer token is needed (Authorization: Bearer <token>)".into(),
            )
        })
    }
}

#[utoipa::path(post, path = "/v1/sessions", tag = "sessions",
    responses((status = 201, body = Created), (status = 401, body = ErrorBody),
              (status = 429, body = ErrorBody, description = "The caller has `max_sessions_per_principal` sessions")))]
pub async fn create_session(
    State(app): State<Arc<App>>,
    principal: Principal,
) -> Result<impl IntoResponse, ApiError> {
    let open = app.create(&principal).await?;
    Ok((StatusCode::CREATED, Json(Created { id: open.id.clone() })))
}

#[utoipa::path(get, path = "/v1/sessions", tag = "sessions",
    responses((status = 200, body = SessionList), (status = 401, body = ErrorBody)))]
pub async fn list_sessions(
    State(app): State<Arc<App>>,
    principal: Principal,
) -> Result<Json<SessionList>, ApiError> {
    Ok(Json(SessionList { sessions: app.list(&principal)? }))
}

#[utoipa::path(get, path = "/v1/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "The session's id")),
    responses((status = 200, body = SessionDetail), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_session(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Json<SessionDetail>, ApiError> {
    let open = match app.session(&principal, &id).await {
        Ok(open) => open,
        // Another process has it open (a turn on another host, a console sitting at its
        // prompt): reading needs no lease, so what is committed is read from the store, with
        // the views as the shared log has them (none without one), and the session is busy.
        Err(ApiError(StatusCode::CONFLICT, _)) => return detail_from_the_log(&app, &principal, id),
        Err(error) => return Err(error),
    };
    // What is committed, read from the store: a running turn holds the live session.
    let stored = app.host.sessions().store().load(&id).map_err(internal)?.ok_or_else(ApiError::not_found)?;
    let status = match open.handle.try_lock() {
        Ok(session) => {
            let status = app.host.plugins().status(&session).await;
            *open.status.lock_unpoisoned() = status.clone();
            status
        }
        // A turn holds the session: what was last read.
        Err(_) => open.status.lock_unpoisoned().clone(),
    };
    let (views, last_event_id) = super::views::of_session(&app, &open).await;
    Ok(Json(SessionDetail {
        id,
        owner: open.owner.clone(),
        busy: open.busy(),
        messages: stored.history,
        status,
        views,
        last_event_id,
        agent: ChildAgent::of(&stored.state),
        tokens: stored.usage,
        model_calls: stored.model_calls,
    }))
}

/// A session another process has open, as the store and the shared log (where hosts share
/// the store) have it: busy.
fn detail_from_the_log(
    app: &App,
    principal: &super::auth::Principal,
    id: String,
) -> Result<Json<SessionDetail>, ApiError> {
    let owner = app.check_owner(principal, &id)?;
    let store = app.host.sessions().store();
    let stored = store.load(&id).map_err(internal)?.ok_or_else(ApiError::not_found)?;
    let (views, last_event_id) = super::shared::logged_views_and_id(&**store, &id);
    Ok(Json(SessionDetail {
        id,
        owner,
        busy: true,
        messages: stored.history,
        status: Vec::new(),
        views,
        last_event_id,
        agent: ChildAgent::of(&stored.state),
        tokens: stored.usage,
        model_calls: stored.model_calls,
    }))
}

#[utoipa::path(get, path = "/v1/sessions/{id}/state", tag = "sessions",
    params(("id" = String, Path, description = "The session's id")),
    responses((status = 200, body = SessionState), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 403, body = ErrorBody, description = "Only an admin may read plugins' raw state")))]
/// The plugins' raw state, for an admin looking into a plugin: not an API to draw from
/// (each plugin's layout is its own), which is what `views` are.
pub async fn session_state(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Json<SessionState>, ApiError> {
    if !principal.admin {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "only an admin (`[serve] admins`) may read plugins' raw state; GET /v1/sessions/{id} has their views"
                .into(),
        ));
    }
    app.readable(&principal, &id).await?;
    // What is committed, read from the store: a running turn holds the live session.
    let stored = app.host.sessions().store().load(&id).map_err(internal)?.ok_or_else(ApiError::not_found)?;
    let mut state: BTreeMap<String, BTreeMap<String, serde_json::Value>> = BTreeMap::new();
    for (namespace, key, json) in &stored.state {
        if namespace.starts_with(agent_host::state::HOST_NAMESPACES) {
            continue;
        }
        let value = serde_json::from_str(json).unwrap_or_else(|_| serde_json::Value::String(json.clone()));
        state.entry(namespace.clone()).or_default().insert(key.clone(), value);
    }
    Ok(Json(SessionState { state }))
}

#[utoipa::path(delete, path = "/v1/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "The session's id")),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_session(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let open = app.session(&principal, &id).await?;
    app.delete(&open).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/v1/sessions/{id}/messages", tag = "turns",
    params(("id" = String, Path, description = "The session's id")),
    request_body = NewMessage,
    responses(
        (status = 202, body = TurnStarted, description = "The turn runs; its events follow on the session's stream"),
        (status = 409, body = ErrorBody, description = "A turn is running in this session"),
        (status = 429, body = ErrorBody, description = "The caller has `max_turns_per_principal` turns running"),
        (status = 503, body = ErrorBody, description = "The server is shutting down"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn post_message(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path(id): Path<String>,
    JsonBody(message): JsonBody<NewMessage>,
) -> Result<(StatusCode, Json<TurnStarted>), ApiError> {
    let open = app.session(&principal, &id).await?;
    super::turns::start(&app, &principal, &open, message.text).map(|turn| (StatusCode::ACCEPTED, Json(turn)))
}

#[utoipa::path(post, path = "/v1/sessions/{id}/cancel", tag = "turns",
    params(("id" = String, Path, description = "The session's id")),
    responses((status = 202, description = "The running turn, if any, is cancelled; for a child agent's session, that child alone, its parent's turn going on"), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn cancel_turn(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    // Not opened: the turn holds the session, here or on another host.
    app.check_owner(&principal, &id)?;
    if !app.exists(&id)? {
        return Err(ApiError::not_found());
    }
    // A child agent's session runs inside its parent's turn: cancelling it stops the child
    // alone, wherever its parent's turn runs.
    if !app.cancel_here(&id)
        && !app.host.cancel_child(&id)
        && app.shared.is_some()
        && let Some(log) = app.host.sessions().store().shared()
    {
        log.request_cancel(&id).map_err(internal)?;
    }
    Ok(StatusCode::ACCEPTED)
}

#[utoipa::path(post, path = "/v1/sessions/{id}/approvals/{approval}", tag = "turns",
    params(("id" = String, Path, description = "The session's id"),
           ("approval" = String, Path, description = "The `id` of the `approval_requested` event (a child agent's: name its session as `agent`)")),
    request_body = ApprovalBody,
    responses((status = 200), (status = 404, body = ErrorBody, description = "No such ask is waiting"),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn answer_approval(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path((id, approval)): Path<(String, String)>,
    JsonBody(body): JsonBody<ApprovalBody>,
) -> Result<StatusCode, ApiError> {
    // Not opened: the turn that asks holds the session, here or on another host.
    app.check_owner(&principal, &id)?;
    let answer = match body.answer {
        Answer::Once => ApprovalAnswer::AllowOnce,
        Answer::AlwaysTool => ApprovalAnswer::AllowToolAlways,
        Answer::AlwaysArguments => ApprovalAnswer::AllowExactAlways,
        Answer::Deny => ApprovalAnswer::Deny { reason: body.reason },
    };
    let key = super::approver::ask_key(&id, body.agent.as_deref(), &approval);
    let here = app.open_here(&id).is_some_and(|open| open.approvals.answer(&key, answer.clone()));
    if here || super::approver::answer_elsewhere(&app, &id, &key, &answer).await {
        Ok(StatusCode::OK)
    } else {
        Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("no ask `{approval}` is waiting (answered, timed out, or never asked)"),
        ))
    }
}

#[utoipa::path(post, path = "/v1/sessions/{id}/commands", tag = "turns",
    params(("id" = String, Path, description = "The session's id")),
    request_body = CommandBody,
    responses((status = 200, body = CommandOutput), (status = 400, body = ErrorBody, description = "The command failed, is unknown, or is `/export` (use `GET /v1/sessions/{id}/export`)"),
              (status = 403, body = ErrorBody, description = "`/reload` by a principal who is not an admin, or a plugin's command `[serve] plugin_commands` does not name"),
              (status = 409, body = ErrorBody, description = "A turn is running in this session"),
              (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn run_command(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<CommandBody>,
) -> Result<Json<CommandOutput>, ApiError> {
    let open = app.session(&principal, &id).await?;
    super::commands::permit(&app, &principal, &id, &body.line)?;
    let mut session = open.handle.try_lock().map_err(|_| {
        open.input.mark();
        ApiError(StatusCode::CONFLICT, super::turns::RUNNING.into())
    })?;
    let output = app.host.command(&mut session, &body.line, &*open.hub).await;
    let output = output.map_err(|error| ApiError(StatusCode::BAD_REQUEST, error))?;
    // A plugin may queue a turn after a command (a loop set or resumed starts working).
    let queued = app.host.queued_turn(&mut session, &*open.hub).await;
    drop(session);
    let turn = match queued {
        Some(prompt) => Some(super::turns::start(&app, &principal, &open, prompt)?),
        None => None,
    };
    Ok(Json(CommandOutput { output, turn }))
}

#[utoipa::path(get, path = "/v1/sessions/{id}/export", tag = "sessions",
    params(("id" = String, Path, description = "The session's id")),
    responses((status = 200, content_type = "application/json", description = "The session as committed, as a session document (`--import FILE` starts a copy of it)"),
              (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn export_session(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    app.readable(&principal, &id).await?;
    // What is committed, read from the store: a running turn holds the live session.
    let stored = app.host.sessions().store().load(&id).map_err(internal)?.ok_or_else(ApiError::not_found)?;
    let document = agent_host::state::document::export(&stored).map_err(internal)?;
    let disposition = format!("attachment; filename=\"session-{id}.json\"");
    Ok((
        [(header::CONTENT_TYPE, "application/json".to_owned()), (header::CONTENT_DISPOSITION, disposition)],
        document,
    ))
}

#[utoipa::path(get, path = "/v1/plugins", tag = "deployment",
    responses((status = 200, body = PluginTable), (status = 401, body = ErrorBody)))]
pub async fn plugins(State(app): State<Arc<App>>, _principal: Principal) -> Json<PluginTable> {
    Json(PluginTable { table: table(&app) })
}

#[utoipa::path(post, path = "/v1/reload", tag = "deployment",
    responses((status = 200, body = PluginTable), (status = 409, body = ErrorBody, description = "The new config or a plugin was refused; the current set keeps serving"),
              (status = 403, body = ErrorBody, description = "Only an admin may reload"), (status = 401, body = ErrorBody)))]
pub async fn reload(
    State(app): State<Arc<App>>,
    principal: Principal,
) -> Result<Json<PluginTable>, ApiError> {
    if !principal.admin {
        return Err(ApiError(StatusCode::FORBIDDEN, "only an admin (`[serve] admins`) may reload".into()));
    }
    match app.host.reload(&agent_host::events::NoEvents).await {
        Ok(()) => Ok(Json(PluginTable { table: table(&app) })),
        Err(error) => Err(ApiError(
            StatusCode::CONFLICT,
            format!("reload refused, the current set keeps serving: {error:#}"),
        )),
    }
}

fn table(app: &App) -> String {
    let mcp = app.host.mcp_table();
    if mcp.is_empty() { app.host.plugin_table() } else { format!("{}\n{mcp}", app.host.plugin_table()) }
}

#[utoipa::path(get, path = "/metrics", tag = "deployment",
    responses((status = 200, body = String, content_type = "application/openmetrics-text", description = "The server's figures"),
              (status = 403, body = ErrorBody, description = "Only an admin may read them"), (status = 401, body = ErrorBody)))]
/// The server's figures in the Prometheus text format, for an admin's scraper (its bearer
/// token in the scrape config): they name plugins and count every principal's turns.
pub async fn metrics(
    State(app): State<Arc<App>>,
    principal: Principal,
) -> Result<impl IntoResponse, ApiError> {
    if !principal.admin {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "only an admin (`[serve] admins`) may read /metrics".into(),
        ));
    }
    let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    Ok((
        [(axum::http::header::CONTENT_TYPE, content_type)],
        app.metrics.text(app.host.sessions().takeovers()),
    ))
}

#[utoipa::path(get, path = "/healthz", tag = "deployment", responses((status = 200, description = "The process serves")))]
pub async fn healthz() -> &'static str {
    "ok"
}

#[utoipa::path(get, path = "/readyz", tag = "deployment",
    responses((status = 200, description = "Ready for turns"), (status = 503, description = "Shutting down")))]
pub async fn readyz(State(app): State<Arc<App>>) -> (StatusCode, &'static str) {
    if app.shutdown.is_cancelled() {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down")
    } else {
        (StatusCode::OK, "ready")
    }
}
