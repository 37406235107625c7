//! What a Messages endpoint sends, as the host reads it: the events of a streamed reply,
//! an error, the usage and the stop reason. Event types, block kinds and delta kinds the
//! host does not know are read as `Unknown` / `Other` and skipped, as the API's versioning
//! policy asks of clients.

use serde::Deserialize;

use crate::events::TokenUsage;
use crate::model::StopReason;

/// One event's data: the parts the host reads.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Event {
    MessageStart {
        message: StartedMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: StartedBlock,
    },
    ContentBlockDelta {
        index: u64,
        delta: Delta,
    },
    ContentBlockStop,
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: EndpointError,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
pub(super) struct StartedMessage {
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum StartedBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
pub(super) enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
pub(super) struct MessageDelta {
    #[serde(default)]
    pub stop_reason: Option<String>,
}

/// `error` as Messages sends it, in an event or a response body.
#[derive(Debug, Deserialize)]
pub(super) struct EndpointError {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

/// `usage` as Messages counts it: `input_tokens` leaves out the cached ones. A field
/// `message_delta` repeats replaces the one `message_start` gave.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

impl WireUsage {
    pub(super) fn merged(self, later: WireUsage) -> Self {
        Self {
            input_tokens: later.input_tokens.or(self.input_tokens),
            output_tokens: later.output_tokens.or(self.output_tokens),
            cache_read_input_tokens: later.cache_read_input_tokens.or(self.cache_read_input_tokens),
            cache_creation_input_tokens: later
                .cache_creation_input_tokens
                .or(self.cache_creation_input_tokens),
        }
    }
}

impl From<WireUsage> for TokenUsage {
    fn from(usage: WireUsage) -> Self {
        let (read, written) =
            (usage.cache_read_input_tokens.unwrap_or(0), usage.cache_creation_input_tokens.unwrap_or(0));
        TokenUsage {
            input_tokens: usage.input_tokens.unwrap_or(0) + read + written,
            output_tokens: usage.output_tokens.unwrap_or(0),
            cache_read_tokens: read,
            cache_write_tokens: written,
        }
    }
}

/// `stop_reason` in the host's words.
pub(super) fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::Done,
        "tool_use" => StopReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "refusal" => StopReason::Filtered,
        other => StopReason::Other(other.to_owned()),
    }
}

/// At most the first 200 bytes of `text`, for an error that quotes it.
pub(super) fn cut(text: &str) -> &str {
    let mut end = text.len().min(200);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
