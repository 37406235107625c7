//! Turns the chunks of a streamed Chat Completions reply (or one whole reply) into a
//! [`ModelReply`]. Pure: no I/O, so it is easy to test and to fuzz.
//!
//! Servers that call themselves OpenAI-compatible stream in more shapes than OpenAI's own,
//! and each shape below is one a real server sends (`tests/fixtures/openai/` has them):
//! a tool call's `id` and `name` repeated on every delta (DeepSeek, DashScope, Fireworks,
//! NVIDIA NIM), deltas without an `index` (Gemini), `arguments` as a JSON object rather
//! than a string (Text Generation Inference, some llama.cpp builds), `choices: null` and
//! `data: null` chunks.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::events::TokenUsage;
use crate::model::{ModelError, ModelReply, StopReason};
use crate::tools::ToolCall;

/// Accumulates streamed deltas: text in order, tool calls by their `index` (or, without
/// one, by their id and name).
#[derive(Debug, Default)]
pub struct ReplyAssembler {
    text: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    /// The `finish_reason` a chunk gave, once one did.
    stop: Option<StopReason>,
    usage: Option<TokenUsage>,
}

#[derive(Debug, Default)]
struct PartialCall {
    /// The delta's `index`; `None` for a call an endpoint streamed without one.
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// Tool calls one reply may carry; more is a broken endpoint, not a plan.
const MAX_TOOL_CALLS: usize = 128;

/// The parts of a reply (a stream chunk or a whole response) the host reads, borrowed from
/// the text where no escape needs decoding. Everything else an endpoint sends is skipped.
#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// `usage` as Chat Completions reports it; `prompt_tokens` includes the cached ones.
#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl From<WireUsage> for TokenUsage {
    fn from(usage: WireUsage) -> Self {
        TokenUsage {
            input_tokens: usage.prompt_tokens.unwrap_or(0),
            output_tokens: usage.completion_tokens.unwrap_or(0),
            cache_read_tokens: usage
                .prompt_tokens_details
                .and_then(|details| details.cached_tokens)
                .unwrap_or(0),
            cache_write_tokens: 0,
        }
    }
}

#[derive(Deserialize)]
struct Choice<'a> {
    /// A stream chunk's part of the message.
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    /// A whole response's message.
    #[serde(borrow, default)]
    message: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    /// What DeepSeek, vLLM and llama.cpp call the model's shown reasoning.
    #[serde(borrow, default)]
    reasoning_content: Option<Cow<'a, str>>,
    /// What OpenRouter and Ollama call it.
    #[serde(borrow, default)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<CallDelta<'a>>>,
}

#[derive(Deserialize)]
struct CallDelta<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize, Default)]
struct FunctionDelta<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// A fragment of the arguments' JSON text, as a string; or, from some servers, the
    /// arguments as a JSON object.
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

impl ReplyAssembler {
    /// Takes one `data:` payload of the stream. Returns the text delta it carried, if any.
    pub fn push_chunk(&mut self, data: &str) -> Result<Option<String>, ModelError> {
        let chunk: Option<Reply<'_>> =
            serde_json::from_str(data).map_err(|error| unreadable("a stream chunk", &error, data))?;
        // `data: null`: a keep-alive some proxies send.
        let Some(chunk) = chunk else { return Ok(None) };
        if let Some(error) = chunk.error {
            return Err(ModelError::Stream { detail: format!("the endpoint sent an error: {error}") });
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.into());
        }
        let Some(choice) = chunk.choices.unwrap_or_default().into_iter().next() else {
            // TokenUsage-only and keep-alive chunks carry no choice (`[]`, `null` or none).
            return Ok(None);
        };
        if let Some(reason) = choice.finish_reason.as_deref().filter(|reason| !reason.is_empty()) {
            self.stop = Some(stop_reason(reason));
        }
        let Some(delta) = choice.delta else { return Ok(None) };
        for reasoning in [&delta.reasoning_content, &delta.reasoning].into_iter().flatten() {
            self.reasoning.push_str(reasoning);
        }
        for call in delta.tool_calls.unwrap_or_default() {
            self.push_call_delta(call)?;
        }
        match delta.content {
            Some(text) if !text.is_empty() => {
                self.text.push_str(&text);
                Ok(Some(text.into_owned()))
            }
            _ => Ok(None),
        }
    }

    fn push_call_delta(&mut self, call: CallDelta<'_>) -> Result<(), ModelError> {
        let function = call.function.unwrap_or_default();
        let id = call.id.filter(|id| !id.is_empty());
        let name = function.name.filter(|name| !name.is_empty());
        let existing = match call.index {
            Some(index) => self.calls.iter().position(|partial| partial.index == Some(index)),
            None => self.continued_call(id.as_deref(), name.as_deref()),
        };
        let position = match existing {
            Some(position) => position,
            None => {
                if self.calls.len() >= MAX_TOOL_CALLS {
                    return Err(ModelError::Stream {
                        detail: format!("more than {MAX_TOOL_CALLS} tool calls in one reply"),
                    });
                }
                self.calls.push(PartialCall { index: call.index, ..PartialCall::default() });
                self.calls.len() - 1
            }
        };
        let partial = &mut self.calls[position];
        if let Some(id) = id {
            extend(&mut partial.id, &id);
        }
        if let Some(name) = name {
            extend(&mut partial.name, &name);
        }
        if let Some(arguments) = function.arguments {
            partial.arguments.push_str(&arguments_text(arguments)?);
        }
        Ok(())
    }

    /// For a delta without an `index`: the call it continues, the last one begun, unless
    /// the delta starts another (a new id, or a new name), or names the same tool again
    /// without an id after that call's arguments are complete.
    fn continued_call(&self, id: Option<&str>, name: Option<&str>) -> Option<usize> {
        let position = self.calls.len().checked_sub(1)?;
        let current = &self.calls[position];
        let another = match (id, name) {
            (Some(id), _) if !current.id.is_empty() => id != current.id,
            (_, Some(name)) if !current.name.is_empty() && name != current.name => true,
            (None, Some(name)) => name == current.name && complete_json(&current.arguments),
            _ => false,
        };
        (!another).then_some(position)
    }

    /// Whether a chunk said the reply is complete (`finish_reason`).
    pub fn finished(&self) -> bool {
        self.stop.is_some()
    }

    /// The reply so far. Calls without a name are kept (the loop answers them with an error
    /// the model can act on); calls without an id keep an empty one, for the loop to name
    /// (`tools::call_ids`: it knows the session and the history).
    pub fn finish(self) -> ModelReply {
        let tool_calls = self
            .calls
            .into_iter()
            .map(|call| ToolCall {
                id: call.id,
                name: call.name,
                arguments: if call.arguments.trim().is_empty() { "{}".to_owned() } else { call.arguments },
            })
            .collect();
        let stop = self.stop.unwrap_or_default();
        ModelReply { text: self.text, tool_calls, reasoning: self.reasoning, stop, usage: self.usage }
    }

    /// Parses a whole, non-streamed Chat Completions response.
    pub fn from_response(body: &[u8]) -> Result<ModelReply, ModelError> {
        let text = || String::from_utf8_lossy(body);
        let response: Option<Reply<'_>> =
            serde_json::from_slice(body).map_err(|error| unreadable("the response", &error, &text()))?;
        let no_choices =
            || ModelError::Stream { detail: format!("the response has no choices: {}", preview(&text())) };
        let response = response.ok_or_else(no_choices)?;
        if let Some(error) = response.error {
            return Err(ModelError::Stream { detail: format!("the endpoint sent an error: {error}") });
        }
        let choice = response.choices.unwrap_or_default().into_iter().next();
        let finish_reason = choice.as_ref().and_then(|choice| {
            choice.finish_reason.as_deref().filter(|reason| !reason.is_empty()).map(stop_reason)
        });
        let message = choice.and_then(|choice| choice.message).ok_or_else(no_choices)?;
        let mut assembler = ReplyAssembler {
            stop: finish_reason,
            usage: response.usage.map(TokenUsage::from),
            ..Default::default()
        };
        if let Some(text) = message.content {
            assembler.text.push_str(&text);
        }
        for reasoning in [&message.reasoning_content, &message.reasoning].into_iter().flatten() {
            assembler.reasoning.push_str(reasoning);
        }
        for (index, mut call) in message.tool_calls.unwrap_or_default().into_iter().enumerate() {
            call.index = Some(index as u64);
            assembler.push_call_delta(call)?;
        }
        Ok(assembler.finish())
    }
}

/// Adds what a delta says of an id or a name to what came before: the same value again
/// (sent on every delta) changes nothing, a longer one that starts with it replaces it, and
/// anything else is the next fragment.
fn extend(kept: &mut String, delta: &str) {
    if kept.as_str() == delta {
        return;
    }
    if delta.starts_with(kept.as_str()) {
        delta.clone_into(kept);
    } else {
        kept.push_str(delta);
    }
}

/// A delta's `arguments` as text: a string's contents, or an object's JSON text.
fn arguments_text(raw: &RawValue) -> Result<Cow<'_, str>, ModelError> {
    let json = raw.get();
    if json == "null" {
        return Ok(Cow::Borrowed(""));
    }
    if !json.starts_with('"') {
        return Ok(Cow::Borrowed(json));
    }
    // A string with an escape (every object's quotes are) cannot be borrowed: asking for a
    // borrow first would build serde_json's error for nearly every fragment.
    let text = if json.contains('\\') {
        serde_json::from_str::<String>(json).map(Cow::Owned)
    } else {
        serde_json::from_str::<&str>(json).map(Cow::Borrowed)
    };
    text.map_err(|error| ModelError::Stream {
        detail: format!("a tool call's arguments could not be read ({error})"),
    })
}

/// Whether `text` is one whole JSON value.
fn complete_json(text: &str) -> bool {
    !text.trim().is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// `finish_reason` in the host's terms.
fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" | "eos" | "end_turn" => StopReason::Done,
        "tool_calls" | "function_call" => StopReason::ToolCalls,
        "length" | "max_tokens" => StopReason::Length,
        "content_filter" | "refusal" => StopReason::Filtered,
        other => StopReason::Other(other.to_owned()),
    }
}

/// Why `what` could not be read: not JSON at all, or JSON of the wrong shape (a field of
/// the wrong type, say).
fn unreadable(what: &str, error: &serde_json::Error, text: &str) -> ModelError {
    let problem = if error.is_data() { "is not a Chat Completions reply" } else { "is not JSON" };
    ModelError::Stream { detail: format!("{what} {problem} ({error}): {}", preview(text)) }
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
        assert_eq!(reply.stop, StopReason::ToolCalls);
        assert_eq!(reply.usage, None);
        assert_eq!(reply.text, "Hello");
        assert_eq!(reply.tool_calls.len(), 2);
        assert_eq!(reply.tool_calls[0].name, "echo");
        assert_eq!(reply.tool_calls[0].arguments, r#"{"text":"hi"}"#);
        assert_eq!(reply.tool_calls[1].id, "call_b");
    }

    #[test]
    fn a_cut_reply_its_usage_and_its_reasoning_are_reported() {
        let mut assembler = ReplyAssembler::default();
        for chunk in [
            r#"{"choices":[{"delta":{"reasoning_content":"Think"}}]}"#,
            r#"{"choices":[{"delta":{"reasoning_content":"ing.","content":"Half a sen"}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":16,"prompt_tokens_details":{"cached_tokens":64}}}"#,
        ] {
            assembler.push_chunk(chunk).unwrap();
        }
        let reply = assembler.finish();
        assert_eq!((reply.text.as_str(), reply.reasoning.as_str()), ("Half a sen", "Thinking."));
        assert_eq!(reply.stop, StopReason::Length);
        let usage =
            TokenUsage { input_tokens: 120, output_tokens: 16, cache_read_tokens: 64, cache_write_tokens: 0 };
        assert_eq!(reply.usage, Some(usage));
    }

    #[test]
    fn a_chunk_that_is_not_json_is_a_stream_error() {
        let error = ReplyAssembler::default().push_chunk("{oops").unwrap_err();
        assert!(error.to_string().contains("not JSON"), "{error}");
    }

    #[test]
    fn a_field_of_the_wrong_type_is_named_as_such() {
        let error = ReplyAssembler::from_response(br#"{"choices":[{"message":{"content":5}}]}"#).unwrap_err();
        assert!(error.to_string().contains("is not a Chat Completions reply"), "{error}");
        assert!(error.to_string().contains("invalid type"), "{error}");
    }

    #[test]
    fn escaped_text_and_missing_indexes_assemble() {
        let body = br#"{"choices":[{"message":{"content":"a \"quoted\" line\n","tool_calls":[
            {"id":"c1","function":{"name":"echo","arguments":"{\"text\":\"\u00e9\"}"}},
            {"function":{"name":"recall"}}]},"finish_reason":"tool_calls"}],"usage":{"total_tokens":3}}"#;
        let reply = ReplyAssembler::from_response(body).unwrap();
        assert_eq!(reply.text, "a \"quoted\" line\n");
        assert_eq!(reply.tool_calls[0].arguments, r#"{"text":"é"}"#);
        assert_eq!(
            (reply.tool_calls[1].id.as_str(), reply.tool_calls[1].arguments.as_str()),
            ("", "{}"),
            "a call without an id is left for the client to name"
        );
    }

    fn assembled(chunks: &[&str]) -> ModelReply {
        let mut assembler = ReplyAssembler::default();
        for chunk in chunks {
            assembler.push_chunk(chunk).unwrap();
        }
        assembler.finish()
    }

    fn calls(reply: &ModelReply) -> Vec<(&str, &str, &str)> {
        reply.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str())).collect()
    }

    #[test]
    fn an_id_and_a_name_sent_on_every_delta_are_one_value_not_fragments() {
        let reply = assembled(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"notes_add","arguments":"{\"x\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"notes_add","arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"notes_","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"name":"get_all","arguments":"{}"}}]}}]}"#,
        ]);
        assert_eq!(calls(&reply), [("call_a", "notes_add", r#"{"x":1}"#), ("call_b", "notes_get_all", "{}")]);
    }

    #[test]
    fn deltas_without_an_index_continue_the_call_until_another_begins() {
        let reply = assembled(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"f1","function":{"name":"notes_add","arguments":"{\"t\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"f2","function":{"name":"notes_add","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"notes_get_all","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"notes_get_all","arguments":"{}"}}]}}]}"#,
        ]);
        assert_eq!(
            calls(&reply),
            [
                ("f1", "notes_add", r#"{"t":"a"}"#),
                ("f2", "notes_add", "{}"),
                ("", "notes_get_all", "{}"),
                ("", "notes_get_all", "{}"),
            ],
            "a new id, a new name, or the same name after complete arguments starts a call"
        );
    }

    #[test]
    fn arguments_sent_as_an_object_are_its_json_text() {
        let reply = assembled(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"n","arguments":{"a":[1,"é"]}}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"d","function":{"name":"m","arguments":null}}]}}]}"#,
        ]);
        assert_eq!(calls(&reply), [("c", "n", r#"{"a":[1,"é"]}"#), ("d", "m", "{}")]);
    }

    #[test]
    fn null_chunks_choices_and_fields_are_skipped() {
        let reply = assembled(&[
            "null",
            r#"{"choices":null}"#,
            r#"{"choices":[{"delta":null}]}"#,
            r#"{"choices":[{"delta":{"content":"ok","tool_calls":null},"finish_reason":""}]}"#,
            r#"{"choices":null,"usage":{"prompt_tokens":5,"completion_tokens":null,"prompt_tokens_details":null}}"#,
        ]);
        assert_eq!(reply.text, "ok");
        assert_eq!(reply.stop, StopReason::Done, "an empty finish_reason is no reason");
        assert_eq!(reply.usage, Some(TokenUsage { input_tokens: 5, ..TokenUsage::default() }));
        let mut open = ReplyAssembler::default();
        open.push_chunk(r#"{"choices":[{"delta":{"content":"x"},"finish_reason":""}]}"#).unwrap();
        assert!(!open.finished());
    }

    #[test]
    fn whole_response_parses() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"echo","arguments":"{\"text\":\"x\"}"}}]}}]}"#;
        let reply = ReplyAssembler::from_response(body.as_bytes()).unwrap();
        assert_eq!(reply.text, "");
        assert_eq!(reply.tool_calls[0].id, "c1");
    }
}
