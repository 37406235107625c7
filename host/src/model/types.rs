use serde::Serialize;

use crate::conversation::{History, Message, ToolCallRequest};

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
    pub history: &'a History,
    /// Messages for this call only (plugins' injected messages), after the history.
    pub injected: &'a [Message],
    pub tools: &'a [ToolDefinition],
}

/// What the model answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    pub text: String,
    pub tool_calls: Vec<ToolCallRequest>,
}
