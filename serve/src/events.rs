//! `GET /v1/sessions/{id}/events`: the session's events as Server-Sent Events, each with its
//! `EPOCH-N` id as the SSE id, the event's `type` as the SSE event name and the `--json`
//! object as data. A client that reconnects with `Last-Event-ID` is sent what it missed
//! first, from the events the session keeps (`[serve] event_buffer`, `event_buffer_kb`);
//! when some are gone, or the id is of another epoch (the server restarted, or let the
//! session go while idle), a `gap` event says from where. Where hosts share the store the
//! stream is read from the shared log instead (`log_stream.rs`).

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::broadcast::error::RecvError;

use super::api::{ApiError, ErrorBody};
use super::auth::Principal;
use super::hub::{Hub, Numbered, Resume};
use super::state::App;

#[utoipa::path(get, path = "/v1/sessions/{id}/events", tag = "turns",
    params(("id" = String, Path, description = "The session's id"),
           ("Last-Event-ID" = Option<String>, Header, description = "The last event id received: what followed it is sent first; an id of another epoch (or, on many hosts, not of the shared log) gets a `gap` event and everything kept")),
    responses((status = 200, content_type = "text/event-stream",
               description = "One SSE event per host event: `id` is `EPOCH-N` (N its number in the epoch) on one host, `log-N` (N its number in the session, the same on every host) where hosts share a PostgreSQL store; `event` its type, `data` the `--json` object (docs/events.md)"),
              (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn stream(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if app.shared.is_some() {
        return from_the_log(&app, &principal, id, &headers);
    }
    let open = app.session(&principal, &id).await?;
    let last_seen = headers.get("last-event-id").map(|value| value.to_str().unwrap_or("?"));
    let resume = open.hub.resume_from(last_seen);
    let replay = open.hub.replay(resume);
    let mut first: Vec<SseEvent> = Vec::new();
    if let Some(oldest) = replay.gap_before {
        let gap = serde_json::json!({ "type": "gap", "oldest_kept": oldest });
        first.push(SseEvent::default().event("gap").data(gap.to_string()));
    }
    let resumed_after = match resume {
        Resume::After(n) => n,
        Resume::Fresh | Resume::Elsewhere => 0,
    };
    let last_replayed = replay.missed.last().map_or(resumed_after, |event| event.id);
    first.extend(replay.missed.iter().map(|event| sse(&open.hub, event)));
    let state = Live {
        hub: open.hub.clone(),
        first: first.into_iter(),
        live: replay.live,
        after: last_replayed,
        shutdown: app.shutdown.clone(),
    };
    let events = futures_util::stream::unfold(state, |mut state| async move {
        if let Some(event) = state.first.next() {
            return Some((Ok::<_, Infallible>(event), state));
        }
        loop {
            let received = tokio::select! {
                received = state.live.recv() => received,
                () = state.shutdown.cancelled() => return None,
            };
            match received {
                // Sent before the replay was taken: already sent from it.
                Ok(event) if event.id <= state.after => continue,
                Ok(event) => {
                    state.after = event.id;
                    return Some((Ok(sse(&state.hub, &event)), state));
                }
                // Too far behind: end the stream; a reconnect resumes from what is kept.
                Err(RecvError::Lagged(_) | RecvError::Closed) => return None,
            }
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()).into_response())
}

/// Where hosts share the store: the stream read from the shared log, whichever host runs
/// the session's turns; the session is not opened here.
fn from_the_log(
    app: &Arc<App>,
    principal: &Principal,
    id: String,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let Some(shared) = &app.shared else { return Err(ApiError::not_found()) };
    app.check_owner(principal, &id)?;
    let store = app.host.sessions().store().clone();
    if !app.exists(&id)? {
        return Err(ApiError::not_found());
    }
    let from = super::log_stream::From::parse(
        headers.get("last-event-id").map(|value| value.to_str().unwrap_or("?")),
    );
    let stream = super::log_stream::LogStream::new(
        store,
        shared.wakers.clone(),
        id.clone(),
        from,
        app.shutdown.clone(),
    );
    let events = futures_util::stream::unfold(stream, |mut stream| async move {
        stream.next().await.map(|event| (Ok::<_, Infallible>(event), stream))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()).into_response())
}

struct Live {
    hub: Arc<Hub>,
    first: std::vec::IntoIter<SseEvent>,
    live: tokio::sync::broadcast::Receiver<Numbered>,
    after: u64,
    shutdown: tokio_util::sync::CancellationToken,
}

fn sse(hub: &Hub, event: &Numbered) -> SseEvent {
    SseEvent::default().id(hub.event_id(event)).event(&*event.kind).data(&*event.json)
}
