use schemars::JsonSchema;
use serde::Serialize;

use crate::conversation::{History, Message};
use crate::events::TokenUsage;
use crate::tools::ToolCall;

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
    /// The most tokens the reply may have, in place of `[model] max_output_tokens`: set by a
    /// plugin's own request (`model.complete`), `None` for the agent's calls.
    pub max_output_tokens: Option<u32>,
    /// Another model of the same endpoint, by name, in place of `[model] model`: a child
    /// agent's (contract 0.2.8). `None` for the deployment's own.
    pub model: Option<&'a str>,
}

impl<'a> ModelRequest<'a> {
    /// A request of `history` alone: no system prompt, injected messages or tools.
    pub fn of_history(session_id: &'a str, history: &'a History) -> Self {
        Self {
            session_id,
            system: "",
            history,
            injected: &[],
            tools: &[],
            max_output_tokens: None,
            model: None,
        }
    }
}

/// What the model answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    /// What the model showed of its reasoning (`reasoning_content`, thinking), apart from
    /// the text: shown, never sent back.
    pub reasoning: String,
    /// Why the reply ended.
    pub stop: StopReason,
    /// What the call cost, when the endpoint said.
    pub usage: Option<TokenUsage>,
}

/// Why a reply ended, in the endpoint's words mapped to the host's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its reply (`stop`, `end_turn`), or the endpoint did not say.
    #[default]
    Done,
    /// The model asked for tool calls (`tool_calls`, `tool_use`).
    ToolCalls,
    /// The reply hit the output limit (`length`, `max_tokens`): it is cut, and any tool
    /// call in it may be incomplete.
    Length,
    /// The endpoint stopped the reply for its content (`content_filter`, `refusal`).
    Filtered,
    /// A reason the host does not know, as the endpoint spelled it.
    Other(String),
}

impl StopReason {
    /// The reason as Chat Completions spells it (a trace's `gen_ai.response.finish_reasons`).
    pub fn finish_reason(&self) -> &str {
        match self {
            StopReason::Done => "stop",
            StopReason::ToolCalls => "tool_calls",
            StopReason::Length => "length",
            StopReason::Filtered => "content_filter",
            StopReason::Other(reason) => reason,
        }
    }
}
