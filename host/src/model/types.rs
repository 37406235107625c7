use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One message of a conversation, as stored in the history and sent to the model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
    /// For `Role::Tool`: the call this result answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// This message as a request body carries it, encoded on its first request (see
    /// `wire.rs`). Every model call sends the whole history, so a message is otherwise
    /// escaped again on every call after it: quadratic in a long session.
    #[serde(skip)]
    pub(super) wire: OnceLock<Box<RawValue>>,
}

/// Equal when what was said is equal; the encoding kept alongside does not count.
impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.role == other.role
            && self.content == other.content
            && self.tool_calls == other.tool_calls
            && self.tool_call_id == other.tool_call_id
    }
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self::text(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::text(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCallRequest>) -> Self {
        Self { tool_calls, ..Self::text(Role::Assistant, content) }
    }

    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self { tool_call_id: Some(call_id.into()), ..Self::text(Role::Tool, content) }
    }

    fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            wire: OnceLock::new(),
        }
    }
}

/// A tool call the model asked for. `arguments` is the model's raw text: it may not be JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A tool as the model sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    /// The JSON Schema, compact JSON text.
    pub parameters: std::sync::Arc<serde_json::value::RawValue>,
}

/// Everything one model call sends. Borrowed, so a round trip never copies the history.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    pub session_id: &'a str,
    pub system: &'a str,
    pub history: &'a [Message],
    /// Messages for this call only (plugins' injected messages), after the history.
    pub injected: &'a [Message],
    pub tools: &'a [ToolDefinition],
}

impl ModelRequest<'_> {
    /// The messages in the order the model reads them.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.history.iter().chain(self.injected)
    }
}

/// What the model answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    pub text: String,
    pub tool_calls: Vec<ToolCallRequest>,
}
