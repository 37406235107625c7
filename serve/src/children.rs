//! Child agents (contract 0.2.8) over HTTP: a session's children listed as its store has
//! them, and the owner a child's session has — its parent's, since the core makes a child's
//! session with no owner of its own, and the person whose turn started it is the one to read
//! it, answer for it and go on with it.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};

use super::api::{ApiError, ChildList, ChildSummary, ErrorBody};
use super::auth::Principal;
use super::state::{App, internal};
use agent_host::agent::{recorded_children, recorded_parent};
use agent_host::state::{SessionStore, StateBag, StoreError};

/// How many parents up a child's owner is looked for: past the deepest nesting a deployment
/// would allow (`max_subagent_depth`), and a bound on a store that links in a loop.
const MAX_ANCESTORS: usize = 16;

#[utoipa::path(get, path = "/v1/sessions/{id}/children", tag = "sessions",
    params(("id" = String, Path, description = "The session's id")),
    responses((status = 200, body = ChildList), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
/// The session's child agents, in the order they were started, as committed: a child's
/// `state` and `answer` change once its turn ended and its parent's step was stored (until
/// then it is `pending`); what a running child does comes on its parent's event stream, as
/// `subagent` events. Each child is a session: `GET /v1/sessions/{child id}` reads it.
pub async fn list(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Json<ChildList>, ApiError> {
    app.readable(&principal, &id).await?;
    // What is committed, read from the store: a running turn holds the live session.
    let stored = app.host.sessions().store().load(&id).map_err(internal)?.ok_or_else(ApiError::not_found)?;
    let children = recorded_children(&StateBag::from_entries(stored.state));
    let children = children
        .into_iter()
        .map(|(id, record)| ChildSummary {
            id,
            number: record.number,
            agent: record.name,
            state: record.state,
            call_id: record.call_id,
            answer: record.answer,
        })
        .collect();
    Ok(Json(ChildList { children }))
}

/// Who a stored session belongs to, and, for a child agent's session, the session that
/// started it.
pub struct Lineage {
    /// Its owner as stored, or its nearest ancestor's for a child agent's session (which has
    /// none of its own); empty when neither has one (a session started at the console) or the
    /// session does not exist.
    pub owner: String,
    pub parent: Option<String>,
}

/// Session `id`'s [`Lineage`]. A session with an owner is read alone; one without is loaded to
/// find its parent.
pub fn stored_lineage(store: &dyn SessionStore, id: &str) -> Result<Lineage, StoreError> {
    let mut at = id.to_owned();
    let mut parent = None;
    for _ in 0..MAX_ANCESTORS {
        let owner = store.state_value(&at, agent_host::state::OWNER.0, agent_host::state::OWNER.1)?;
        if let Some(owner) = owner.and_then(|json| serde_json::from_str::<String>(&json).ok()) {
            return Ok(Lineage { owner, parent });
        }
        let Some(stored) = store.load(&at)? else { break };
        match recorded_parent(&StateBag::from_entries(stored.state)) {
            Some((above, _)) => {
                parent.get_or_insert_with(|| above.clone());
                at = above;
            }
            None => break,
        }
    }
    Ok(Lineage { owner: String::new(), parent })
}
