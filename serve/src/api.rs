//! The API's request and response bodies, and its one error shape, `{"error": "..."}`.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Every error: what went wrong, in words.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: String,
}

/// An error response: a status and the words that explain it.
#[derive(Debug)]
pub struct ApiError(pub StatusCode, pub String);

impl ApiError {
    pub fn not_found() -> Self {
        // The same answer whether the session does not exist or is another principal's.
        Self(StatusCode::NOT_FOUND, "no such session".into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(ErrorBody { error: self.1 })).into_response()
    }
}

/// A JSON body whose rejection (malformed, wrong type, too large) is an [`ApiError`].
pub struct JsonBody<T>(pub T);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    Json<T>: FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(ApiError(rejection.status(), rejection.body_text())),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    /// The new session's id.
    pub id: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SessionSummary {
    pub id: String,
    /// The principal it belongs to.
    pub owner: String,
    /// Whether a turn is running in it now, or another process holds it (a console, or
    /// another host sharing the store, which holds a session only while it uses it).
    pub busy: bool,
    /// When a turn last started in it (when it was made, before one), unix seconds.
    pub updated_at: i64,
    /// Its first prompt on one line, control characters escaped, cut after 80 characters
    /// with `…`; `null` before the first.
    pub title: Option<String>,
    /// For a child agent's session (listed to an admin only), the session that started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SessionList {
    pub sessions: Vec<SessionSummary>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SessionDetail {
    pub id: String,
    pub owner: String,
    pub busy: bool,
    /// The history as stored: every committed message (`role`, `content`, and
    /// `tool_calls` or `tool_call_id`).
    #[schema(value_type = Vec<Object>)]
    pub messages: Vec<agent_host::conversation::Message>,
    /// What the plugins show beside a prompt (the current mode, say), in config order.
    pub status: Vec<String>,
    /// What the plugins show of the session, each a `view_changed` event's view without its
    /// `type` (docs/events.md): a plugin and its widgets (`checklist`, `choice`, `text`), or
    /// the error its view ended with. Plugins that show nothing are left out.
    #[schema(value_type = Vec<Object>)]
    pub views: Vec<agent_host::events::PluginView>,
    /// The id of the last event of the session's stream these views include (`EPOCH-N`), or
    /// none before the first: follow the stream with it as `Last-Event-ID` to be sent only
    /// what came after.
    pub last_event_id: Option<String>,
    /// Tokens the session's model calls used, as the endpoint counted them.
    #[schema(value_type = Object)]
    pub tokens: agent_host::events::TokenUsage,
    pub model_calls: u64,
    /// For a child agent's session: what it was started with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<ChildAgent>,
}

/// What a child agent's session was started with, which narrows every turn it runs (one an
/// operator gives it too).
#[derive(Debug, Serialize, ToSchema)]
pub struct ChildAgent {
    /// The session that started it.
    pub parent: String,
    /// Its agent name.
    pub name: String,
    /// Its system prompt, in place of the deployment's instructions.
    pub system_prompt: Option<String>,
    /// The only tools it is offered.
    pub tools: Vec<String>,
    /// Its model on the deployment's endpoint, when not the deployment's.
    pub model: Option<String>,
}

impl ChildAgent {
    /// What `state` (a session's committed state) records of the child it is, if it is one.
    pub fn of(state: &[(String, String, String)]) -> Option<Self> {
        let link =
            agent_host::agent::ChildLink::of(&agent_host::state::StateBag::from_entries(state.to_vec()))?;
        Some(Self {
            parent: link.parent_id,
            name: link.name,
            system_prompt: link.system_prompt,
            tools: link.tools,
            model: link.model,
        })
    }
}

/// A session's child agents (contract 0.2.8), in the order they were started.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChildList {
    pub children: Vec<ChildSummary>,
}

/// One child agent: a session of its own, linked to the session that started it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChildSummary {
    /// Its session's id (`GET /v1/sessions/{id}` reads it; `--session` opens it).
    pub id: String,
    /// The order it was started in, from 1.
    pub number: u32,
    /// Its agent name.
    pub agent: String,
    /// `pending` (waiting for its turn, or running it), `running`, `done`, `failed` or
    /// `cancelled`.
    #[schema(value_type = String)]
    pub state: agent_host::events::AgentState,
    /// The tool call that started it, when one did.
    pub call_id: Option<String>,
    /// Its final reply once done (what the call waiting for it got as its result); the error
    /// once failed.
    pub answer: Option<String>,
}

/// The plugins' state as committed, for an admin: by plugin namespace then key, each value
/// the JSON the plugin stored, the host's own namespaces left out. Each plugin's private
/// layout, which may change with any version of it: a front end draws `views` instead.
#[derive(Debug, Serialize, ToSchema)]
pub struct SessionState {
    #[schema(value_type = Object)]
    pub state: std::collections::BTreeMap<String, std::collections::BTreeMap<String, serde_json::Value>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMessage {
    /// The user's message; it starts a turn.
    pub text: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TurnStarted {
    /// The turn's id: its events follow on the session's stream.
    pub turn: String,
}

/// The answer to an `approval_requested` event.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalBody {
    pub answer: Answer,
    /// For `deny`: why, for the model.
    #[serde(default)]
    pub reason: Option<String>,
    /// For a child agent's call (the `approval_requested` came wrapped in a `subagent`
    /// event): that event's `session_id`, the child's session. Two children's calls may
    /// share an id; this tells them apart.
    #[serde(default)]
    pub agent: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Run this call.
    Once,
    /// Run it and every later call of this tool asked about for the same reason.
    AlwaysTool,
    /// Run it and every later call of this tool with exactly these arguments.
    AlwaysArguments,
    /// Refuse it.
    Deny,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandBody {
    /// A slash command, as typed at the console: `/help`, `/session`, a plugin's command.
    pub line: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CommandOutput {
    pub output: String,
    /// The turn a plugin queued after the command (a loop set or resumed starts working),
    /// started at once; its events arrive on the session's stream. Absent when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<TurnStarted>,
}

/// The value to move a view's choice to.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchBody {
    /// One of the choice's options' `value`s.
    pub value: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Switched {
    /// What the choice's command answered.
    pub output: String,
    /// The plugin's view after the switch (also sent as `view_changed` when it changed).
    #[schema(value_type = Object)]
    pub view: Option<agent_host::events::PluginView>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PluginTable {
    /// One line per plugin (version, file, hash, calls), then the MCP servers.
    pub table: String,
}
