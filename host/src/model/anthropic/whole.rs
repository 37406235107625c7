//! A Messages reply sent whole, as one JSON body: what an endpoint or gateway that ignores
//! `stream: true` answers.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::events::{EndpointError, WireUsage, cut, stop_reason};
use super::stream::MAX_TOOL_CALLS;
use crate::events::TokenUsage;
use crate::model::ModelReply;
use crate::tools::ToolCall;

/// The reply in `body`; an error saying what it is instead when it is none.
pub(super) fn whole(body: &[u8]) -> Result<ModelReply, String> {
    #[derive(Deserialize)]
    struct Whole {
        #[serde(rename = "type", default)]
        kind: String,
        #[serde(default)]
        content: Vec<WholeBlock>,
        #[serde(default)]
        stop_reason: Option<String>,
        #[serde(default)]
        usage: Option<WireUsage>,
        #[serde(default)]
        error: Option<EndpointError>,
    }
    /// A block of any kind: a struct, not a tagged enum, so that `input` can be kept as
    /// the text it came as.
    #[derive(Deserialize)]
    struct WholeBlock {
        #[serde(rename = "type")]
        kind: String,
        #[serde(default)]
        text: String,
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        input: Option<Box<RawValue>>,
    }
    let reply: Whole = serde_json::from_slice(body).map_err(|error| {
        format!("the reply is not a Messages response ({error}): {}", cut(&String::from_utf8_lossy(body)))
    })?;
    if let Some(error) = reply.error {
        return Err(format!("the endpoint sent an error: {}: {}", error.kind, error.message));
    }
    if reply.kind != "message" {
        return Err(format!("the reply is not a Messages response (its type is `{}`)", reply.kind));
    }
    let mut whole = ModelReply {
        stop: reply.stop_reason.as_deref().map(stop_reason).unwrap_or_default(),
        usage: reply.usage.map(TokenUsage::from),
        ..ModelReply::default()
    };
    for block in reply.content {
        match block.kind.as_str() {
            "text" => whole.text.push_str(&block.text),
            "thinking" => {
                if !whole.reasoning.is_empty() {
                    whole.reasoning.push_str("\n\n");
                }
                whole.reasoning.push_str(&block.thinking);
            }
            "tool_use" => {
                let arguments = block.input.map_or_else(|| "{}".to_owned(), |input| input.get().to_owned());
                whole.tool_calls.push(ToolCall { id: block.id, name: block.name, arguments });
            }
            _ => {}
        }
    }
    if whole.tool_calls.len() > MAX_TOOL_CALLS {
        return Err(format!("the reply has more than {MAX_TOOL_CALLS} tool calls"));
    }
    Ok(whole)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::StopReason;

    #[test]
    fn a_reply_sent_whole_is_read_too() {
        let body = json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "x"},
                {"type": "text", "text": "Done."},
                {"type": "tool_use", "id": "toolu_9", "name": "notes_list", "input": {"a": 1}},
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 4, "cache_read_input_tokens": 90},
        });
        let reply = whole(body.to_string().as_bytes()).unwrap();
        assert_eq!(reply.text, "Done.");
        assert_eq!(reply.reasoning, "hm");
        assert_eq!(reply.stop, StopReason::ToolCalls);
        assert_eq!(
            reply.tool_calls,
            [ToolCall { id: "toolu_9".into(), name: "notes_list".into(), arguments: r#"{"a":1}"#.into() }]
        );
        assert_eq!(
            reply.usage,
            Some(TokenUsage {
                input_tokens: 100,
                output_tokens: 4,
                cache_read_tokens: 90,
                cache_write_tokens: 0
            })
        );

        let error = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert_eq!(
            whole(error.to_string().as_bytes()).unwrap_err(),
            "the endpoint sent an error: overloaded_error: Overloaded"
        );
        assert!(whole(b"<html>").unwrap_err().contains("not a Messages response"));
    }
}
