//! Turns the chunks of a streamed Chat Completions reply (or one whole reply) into a
//! [`ModelReply`]. Pure: no I/O, so it is easy to test and to fuzz.

use serde_json::Value;

use super::{ModelError, ModelReply, ToolCallRequest};

/// Accumulates streamed deltas: text in order, tool calls by their `index`.
#[derive(Debug, Default)]
pub struct ReplyAssembler {
    text: String,
    calls: Vec<PartialCall>,
    finished: bool,
}

#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// Tool calls one reply may carry; more is a broken endpoint, not a plan.
const MAX_TOOL_CALLS: usize = 128;

impl ReplyAssembler {
    /// Takes one `data:` payload of the stream. Returns the text delta it carried, if any.
    pub fn push_chunk(&mut self, data: &str) -> Result<Option<String>, ModelError> {
        let chunk: Value = serde_json::from_str(data).map_err(|error| ModelError::Stream {
            detail: format!("a stream chunk is not JSON ({error}): {}", preview(data)),
        })?;
        if let Some(error) = chunk.get("error") {
            return Err(ModelError::Stream { detail: format!("the endpoint sent an error: {error}") });
        }
        let Some(choice) = chunk["choices"].get(0) else {
            // Usage-only and keep-alive chunks carry no choice.
            return Ok(None);
        };
        if !choice["finish_reason"].is_null() {
            self.finished = true;
        }
        let delta = &choice["delta"];
        if let Some(calls) = delta["tool_calls"].as_array() {
            for call in calls {
                self.push_call_delta(call)?;
            }
        }
        match delta["content"].as_str() {
            Some(text) if !text.is_empty() => {
                self.text.push_str(text);
                Ok(Some(text.to_owned()))
            }
            _ => Ok(None),
        }
    }

    fn push_call_delta(&mut self, call: &Value) -> Result<(), ModelError> {
        let index = call["index"].as_u64().unwrap_or(self.calls.len() as u64);
        let position = match self.calls.iter().position(|c| c.index == index) {
            Some(position) => position,
            None => {
                if self.calls.len() >= MAX_TOOL_CALLS {
                    return Err(ModelError::Stream {
                        detail: format!("more than {MAX_TOOL_CALLS} tool calls in one reply"),
                    });
                }
                self.calls.push(PartialCall { index, ..PartialCall::default() });
                self.calls.len() - 1
            }
        };
        let partial = &mut self.calls[position];
        if let Some(id) = call["id"].as_str() {
            partial.id.push_str(id);
        }
        let function = &call["function"];
        if let Some(name) = function["name"].as_str() {
            partial.name.push_str(name);
        }
        if let Some(arguments) = function["arguments"].as_str() {
            partial.arguments.push_str(arguments);
        }
        Ok(())
    }

    /// Whether a chunk said the reply is complete (`finish_reason`).
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The reply so far. Calls without an id get one; calls without a name are kept (the
    /// loop answers them with an error the model can act on).
    pub fn finish(self) -> ModelReply {
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(position, call)| ToolCallRequest {
                id: if call.id.is_empty() { format!("call_{position}") } else { call.id },
                name: call.name,
                arguments: if call.arguments.trim().is_empty() { "{}".to_owned() } else { call.arguments },
            })
            .collect();
        ModelReply { text: self.text, tool_calls }
    }

    /// Parses a whole, non-streamed Chat Completions response.
    pub fn from_response(body: &str) -> Result<ModelReply, ModelError> {
        let response: Value = serde_json::from_str(body).map_err(|error| ModelError::Stream {
            detail: format!("the response is not JSON ({error}): {}", preview(body)),
        })?;
        let message = response["choices"].get(0).map(|choice| &choice["message"]).ok_or_else(|| {
            ModelError::Stream { detail: format!("the response has no choices: {}", preview(body)) }
        })?;
        let mut assembler = ReplyAssembler::default();
        if let Some(text) = message["content"].as_str() {
            assembler.text.push_str(text);
        }
        if let Some(calls) = message["tool_calls"].as_array() {
            for (index, call) in calls.iter().enumerate() {
                let mut call = call.clone();
                call["index"] = index.into();
                assembler.push_call_delta(&call)?;
            }
        }
        Ok(assembler.finish())
    }
}

fn preview(text: &str) -> String {
    let mut end = text.len().min(200);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_tool_call_deltas_assemble_in_order() {
        let mut assembler = ReplyAssembler::default();
        let chunks = [
            r#"{"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}"#,
            r#"{"choices":[{"delta":{"content":"lo"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"echo","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"text\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"recall","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"hi\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ];
        let deltas: Vec<String> =
            chunks.iter().filter_map(|chunk| assembler.push_chunk(chunk).unwrap()).collect();
        assert_eq!(deltas, ["Hel", "lo"]);
        assert!(assembler.finished());
        let reply = assembler.finish();
        assert_eq!(reply.text, "Hello");
        assert_eq!(reply.tool_calls.len(), 2);
        assert_eq!(reply.tool_calls[0].name, "echo");
        assert_eq!(reply.tool_calls[0].arguments, r#"{"text":"hi"}"#);
        assert_eq!(reply.tool_calls[1].id, "call_b");
    }

    #[test]
    fn a_chunk_that_is_not_json_is_a_stream_error() {
        let error = ReplyAssembler::default().push_chunk("{oops").unwrap_err();
        assert!(error.to_string().contains("not JSON"), "{error}");
    }

    #[test]
    fn whole_response_parses() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"echo","arguments":"{\"text\":\"x\"}"}}]}}]}"#;
        let reply = ReplyAssembler::from_response(body).unwrap();
        assert_eq!(reply.text, "");
        assert_eq!(reply.tool_calls[0].id, "c1");
    }
}
