//! The Messages request body, serialized straight from the borrowed request as the Chat
//! Completions one is. What Messages asks for beyond that: the system prompt and the tools
//! at the top level; tool calls and results as content blocks, each call's result in the
//! user message right after it; roles that alternate, starting with the user; and prompt
//! cache breakpoints on the stable prefix (the tools, the system prompt) and at the end of
//! the history.
//!
//! Each history message is kept encoded (in the session's `HistoryEncodings`: a host's
//! model client is the same for its whole life, so they are always this client's) as its
//! content: one block for a user, system or tool message (`null` when it has nothing to
//! say), the list of blocks for an assistant message. Which messages share a turn, and
//! where the history's breakpoint goes, depends on the neighbours: `turns.rs` decides that
//! on every call.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;

use super::turns::{Turn, turns};
use crate::model::encodings::{Encodings, same_tools};
use crate::model::history_encodings::HistoryEncodings;
use crate::model::{Message, ModelRequest, Role, ToolDefinition};

/// What every request of one client carries besides the conversation.
pub(super) struct Settings {
    pub model: String,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    /// `[model] extra_body`, merged into the top level.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// `POST /v1/messages` body for `request`, as bytes ready to send. The system prompt and
/// the tools come from `encodings` when they were sent before, so the cached prefix is the
/// same bytes from call to call; the history's messages come from `history` (the
/// session's own) when they were.
pub(super) fn request_body(
    settings: &Settings,
    request: &ModelRequest<'_>,
    encodings: &Encodings,
    history: &mut HistoryEncodings,
) -> Vec<u8> {
    let system = (!request.system.trim().is_empty()).then(|| {
        encodings.system.get_or_encode(
            |kept| kept == request.system,
            || request.system.to_owned(),
            || to_json(&[Kind::Text { text: request.system.into(), cache_control: Some(Ephemeral) }]),
        )
    });
    let tools = (!request.tools.is_empty()).then(|| {
        encodings.tools.get_or_encode(
            |kept| same_tools(kept, request.tools),
            || request.tools.to_vec(),
            || to_json(&Tools(request.tools)),
        )
    });
    let kept = history.of(request.history, encode);
    let body = MessagesRequest {
        model: request.model.unwrap_or(&settings.model),
        max_tokens: request.max_output_tokens.unwrap_or(settings.max_tokens),
        stream: true,
        temperature: settings.temperature,
        system: system.as_ref().map(|system| &*system.json),
        tools: tools.as_ref().map(|tools| &*tools.json),
        messages: turns(request.history, kept, request.injected),
        extra: &settings.extra,
    };
    serde_json::to_vec(&body).expect("a request body is plain data and always serializes")
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data always serializes")
}

/// `value`'s JSON text, serde_json's own output taken as it is (`RawValue::from_string` would
/// parse it again to check it).
fn to_raw<T: Serialize + ?Sized>(value: &T) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("plain data always serializes")
}

#[derive(serde::Serialize)]
struct MessagesRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    messages: Vec<Turn<'a>>,
    #[serde(flatten)]
    extra: &'a serde_json::Map<String, serde_json::Value>,
}

/// `{"type": "ephemeral"}`: a prompt-cache breakpoint after the block that carries it.
pub(super) struct Ephemeral;

impl Serialize for Ephemeral {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("type", "ephemeral")?;
        map.end()
    }
}

struct Tools<'a>(&'a [ToolDefinition]);

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let last = self.0.len().saturating_sub(1);
        serializer.collect_seq(self.0.iter().enumerate().map(|(at, tool)| WireTool {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.parameters,
            cache_control: (at == last).then_some(Ephemeral),
        }))
    }
}

#[derive(serde::Serialize)]
struct WireTool<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    description: &'a str,
    input_schema: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Ephemeral>,
}

/// One content block.
#[derive(serde::Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Kind<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Ephemeral>,
    },
    ToolUse {
        id: Cow<'a, str>,
        name: &'a str,
        input: Input<'a>,
    },
    ToolResult {
        tool_use_id: Cow<'a, str>,
        #[serde(skip_serializing_if = "str::is_empty")]
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Ephemeral>,
    },
}

impl Kind<'_> {
    pub(super) fn with_breakpoint(mut self) -> Self {
        match &mut self {
            Kind::Text { cache_control, .. } | Kind::ToolResult { cache_control, .. } => {
                *cache_control = Some(Ephemeral);
            }
            Kind::ToolUse { .. } => {}
        }
        self
    }
}

/// A tool call's `input`: the stored arguments when they are a JSON object (the only kind
/// Messages takes), else `{}`: a call cut short or malformed is still sent back in a form
/// the endpoint accepts, and its error result follows it.
pub(super) enum Input<'a> {
    Object(&'a RawValue),
    Empty,
}

impl<'a> Input<'a> {
    fn of(arguments: &'a str) -> Self {
        match serde_json::from_str::<&RawValue>(arguments) {
            Ok(raw) if raw.get().starts_with('{') => Input::Object(raw),
            _ => Input::Empty,
        }
    }
}

impl Serialize for Input<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Input::Object(raw) => raw.serialize(serializer),
            Input::Empty => serializer.serialize_map(Some(0))?.end(),
        }
    }
}

/// A tool call id as Messages takes them (`[A-Za-z0-9_-]+`): a session begun with another
/// endpoint may hold ids with other characters, which become `_` (in the call and in its
/// result alike, so they still match).
pub(super) fn wire_id(id: &str) -> Cow<'_, str> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !id.is_empty() && id.chars().all(allowed) {
        return Cow::Borrowed(id);
    }
    let replaced: String = id.chars().map(|c| if allowed(c) { c } else { '_' }).collect();
    Cow::Owned(if replaced.is_empty() { "_".to_owned() } else { replaced })
}

/// The block a user, system or tool message becomes; `None` for one with nothing to say
/// (Messages refuses an empty or blank text block).
pub(super) fn user_block(message: &Message) -> Option<Kind<'_>> {
    match message.role {
        Role::Tool => Some(Kind::ToolResult {
            tool_use_id: wire_id(message.tool_call_id.as_deref().unwrap_or_default()),
            content: &message.content,
            is_error: false,
            cache_control: None,
        }),
        _ => text_block(&message.content),
    }
}

pub(super) fn text_block(text: &str) -> Option<Kind<'_>> {
    (!text.trim().is_empty()).then(|| Kind::Text { text: text.into(), cache_control: None })
}

/// The blocks of an assistant message: its text, then its tool calls.
fn assistant_blocks(message: &Message) -> Vec<Kind<'_>> {
    let calls = message.tool_calls.iter().map(|call| Kind::ToolUse {
        id: wire_id(&call.id),
        name: &call.name,
        input: Input::of(&call.arguments),
    });
    text_block(&message.content).into_iter().chain(calls).collect()
}

/// `message` as it is kept: see the module's comment.
fn encode(message: &Message) -> Box<RawValue> {
    match message.role {
        Role::Assistant => to_raw(&assistant_blocks(message)),
        _ => to_raw(&user_block(message)),
    }
}

/// Whether a kept encoding has nothing to send.
pub(super) fn is_empty(kept: &RawValue) -> bool {
    matches!(kept.get(), "null" | "[]")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::*;
    use crate::conversation::History;
    use crate::model::anthropic::turns::{NO_RESULT, OPENING};
    use crate::tools::ToolCall;

    fn settings() -> Settings {
        Settings {
            model: "claude-test".into(),
            max_tokens: 1024,
            temperature: None,
            extra: Default::default(),
        }
    }

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: format!("{name} things"),
            parameters: Arc::from(RawValue::from_string(r#"{"type":"object"}"#.to_owned()).unwrap()),
        }
    }

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
    }

    fn body_of(settings: &Settings, request: &ModelRequest<'_>, encodings: &Encodings) -> Vec<u8> {
        request_body(settings, request, encodings, &mut HistoryEncodings::default())
    }

    fn sent(history: &History, injected: &[Message]) -> Value {
        let request = ModelRequest {
            session_id: "s",
            system: "be brief",
            history,
            injected,
            tools: &[],
            max_output_tokens: None,
            model: None,
        };
        serde_json::from_slice(&body_of(&settings(), &request, &Encodings::default())).unwrap()
    }

    fn breakpoint() -> Value {
        json!({"type": "ephemeral"})
    }

    #[test]
    fn a_request_with_its_own_output_limit_sends_that_one() {
        let history = History::from(vec![Message::user("summarise")]);
        let request = ModelRequest {
            session_id: "s",
            system: "",
            history: &history,
            injected: &[],
            tools: &[],
            max_output_tokens: Some(200),
            model: None,
        };
        let body: Value =
            serde_json::from_slice(&body_of(&settings(), &request, &Encodings::default())).unwrap();
        assert_eq!(body["max_tokens"], 200);
        assert_eq!(sent(&history, &[])["max_tokens"], 1024, "the configured limit otherwise");
    }

    #[test]
    fn the_body_has_the_system_prompt_and_tools_on_top_and_every_message_as_blocks() {
        let history = History::from(vec![
            Message::user("hi"),
            Message::system("context from a hook"),
            Message::assistant(
                "Let me look.",
                vec![call("toolu_1", "notes_add", r#"{"title":"a"}"#), call("toolu_2", "notes_get", "{}")],
            ),
            Message::tool("toolu_1", "added"),
            Message::tool("toolu_2", "[a]"),
        ]);
        let injected = vec![Message::system("list: a"), Message::user("mode: plan")];
        let tools = vec![tool("notes_add"), tool("notes_get")];
        let settings = Settings {
            temperature: Some(0.5),
            extra: json!({"top_k": 5, "metadata": {"user_id": "u1"}}).as_object().unwrap().clone(),
            ..settings()
        };
        let request = ModelRequest {
            session_id: "s",
            system: "be brief",
            history: &history,
            injected: &injected,
            tools: &tools,
            max_output_tokens: None,
            model: None,
        };
        let body: Value =
            serde_json::from_slice(&body_of(&settings, &request, &Encodings::default())).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "claude-test",
                "max_tokens": 1024,
                "stream": true,
                "temperature": 0.5,
                "top_k": 5,
                "metadata": {"user_id": "u1"},
                "system": [{"type": "text", "text": "be brief", "cache_control": breakpoint()}],
                "tools": [
                    {"name": "notes_add", "description": "notes_add things", "input_schema": {"type": "object"}},
                    {"name": "notes_get", "description": "notes_get things", "input_schema": {"type": "object"},
                     "cache_control": breakpoint()},
                ],
                "messages": [
                    {"role": "user", "content": [
                        {"type": "text", "text": "hi"},
                        {"type": "text", "text": "context from a hook"},
                    ]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "toolu_1", "name": "notes_add", "input": {"title": "a"}},
                        {"type": "tool_use", "id": "toolu_2", "name": "notes_get", "input": {}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "added"},
                        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "[a]", "cache_control": breakpoint()},
                        {"type": "text", "text": "list: a"},
                        {"type": "text", "text": "mode: plan"},
                    ]},
                ],
            })
        );
    }

    #[test]
    fn results_follow_their_calls_in_order_and_a_missing_one_is_answered() {
        let history = History::from(vec![
            Message::user("go"),
            Message::assistant("", vec![call("a", "t", "{}"), call("b", "t", "{}"), call("c", "t", "{}")]),
            Message::tool("c", "third"),
            Message::tool("a", "first"),
            Message::user("and then?"),
        ]);
        let body = sent(&history, &[]);
        assert_eq!(
            body["messages"][2]["content"],
            json!([
                {"type": "tool_result", "tool_use_id": "a", "content": "first"},
                {"type": "tool_result", "tool_use_id": "b", "content": NO_RESULT, "is_error": true},
                {"type": "tool_result", "tool_use_id": "c", "content": "third"},
                {"type": "text", "text": "and then?", "cache_control": breakpoint()},
            ]),
            "results first, in the calls' order, then the user's text"
        );
        assert_eq!(
            body["messages"][1]["content"],
            json!([
                {"type": "tool_use", "id": "a", "name": "t", "input": {}},
                {"type": "tool_use", "id": "b", "name": "t", "input": {}},
                {"type": "tool_use", "id": "c", "name": "t", "input": {}},
            ]),
            "an assistant message that said nothing has no text block"
        );

        let unanswered =
            History::from(vec![Message::user("go"), Message::assistant("", vec![call("z", "t", "{}")])]);
        let body = sent(&unanswered, &[Message::system("note")]);
        assert_eq!(
            body["messages"][2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "z", "content": NO_RESULT, "is_error": true,
                 "cache_control": breakpoint()},
                {"type": "text", "text": "note"},
            ]})
        );
    }

    #[test]
    fn a_call_with_arguments_that_are_not_an_object_is_sent_with_an_empty_input() {
        for arguments in [r#"{"path": "/a", "cont"#, "[1, 2]", "\"text\"", "", "null"] {
            let history = History::from(vec![
                Message::user("go"),
                Message::assistant("", vec![call("c1", "write", arguments)]),
                Message::tool("c1", "error: the arguments are not JSON"),
            ]);
            assert_eq!(sent(&history, &[])["messages"][1]["content"][0]["input"], json!({}), "{arguments:?}");
        }
        let history = History::from(vec![
            Message::user("go"),
            Message::assistant("", vec![call("c1", "write", " {\"a\": [1, {\"b\": null}]} ")]),
            Message::tool("c1", "ok"),
        ]);
        assert_eq!(sent(&history, &[])["messages"][1]["content"][0]["input"], json!({"a": [1, {"b": null}]}));
    }

    #[test]
    fn roles_alternate_from_the_user_whatever_the_history_holds() {
        let history = History::from(vec![
            Message::assistant("picked up where we were", Vec::new()),
            Message::user("   "),
            Message::assistant("more", Vec::new()),
            Message::tool("gone", "a result whose call was dropped"),
            Message::user("next"),
            Message::assistant("", Vec::new()),
            Message::user("last"),
        ]);
        let body = sent(&history, &[]);
        let roles: Vec<&str> =
            body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(body["messages"][0]["content"], json!([{"type": "text", "text": OPENING}]));
        assert_eq!(
            body["messages"][1]["content"],
            json!([{"type": "text", "text": "picked up where we were"}, {"type": "text", "text": "more"}]),
            "a blank user message between two assistant ones leaves one assistant turn"
        );
        let results = &body["messages"][2]["content"];
        assert_eq!(results[0]["type"], "text", "a result for no call of the turn before is sent as text");
        assert!(results[0]["text"].as_str().unwrap().contains("a result whose call was dropped"));
        assert_eq!(results[1], json!({"type": "text", "text": "next"}));
        assert_eq!(results[2], json!({"type": "text", "text": "last", "cache_control": breakpoint()}));
    }

    #[test]
    fn ids_messages_refuse_are_replaced_alike_in_the_call_and_its_result() {
        let history = History::from(vec![
            Message::user("go"),
            Message::assistant("", vec![call("functions.read:0", "read", "{}")]),
            Message::tool("functions.read:0", "text"),
        ]);
        let body = sent(&history, &[]);
        assert_eq!(body["messages"][1]["content"][0]["id"], "functions_read_0");
        assert_eq!(body["messages"][2]["content"][0]["tool_use_id"], "functions_read_0");
    }

    #[test]
    fn injected_messages_after_an_assistant_turn_open_a_user_turn_of_their_own() {
        let history = History::from(vec![Message::user("hi"), Message::assistant("hello", Vec::new())]);
        let body = sent(&history, &[Message::system("list: none"), Message::system(" ")]);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": breakpoint()}]},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                {"role": "user", "content": [{"type": "text", "text": "list: none"}]},
            ])
        );
        let bare = ModelRequest {
            session_id: "s",
            system: "  ",
            history: &history,
            injected: &[],
            tools: &[],
            max_output_tokens: None,
            model: None,
        };
        let body: Value =
            serde_json::from_slice(&body_of(&settings(), &bare, &Encodings::default())).unwrap();
        assert!(
            body.get("system").is_none() && body.get("tools").is_none() && body.get("temperature").is_none()
        );
    }

    /// The bytes from the start of the body to the end of the `tools` field: the cached prefix.
    fn prefix(body: &[u8]) -> &[u8] {
        let text = std::str::from_utf8(body).unwrap();
        let end = text.find(",\"messages\":").expect("the messages follow the tools");
        &body[..end]
    }

    #[test]
    fn the_cached_prefix_is_the_same_bytes_while_the_system_prompt_and_tools_are() {
        let encodings = Encodings::default();
        let tools = vec![tool("notes_add"), tool("notes_get")];
        let mut history = History::from(vec![Message::user("one")]);
        let mut kept = HistoryEncodings::default();
        let mut body = |history: &History, system: &str, encodings: &Encodings| {
            let request = ModelRequest {
                session_id: "s",
                system,
                history,
                injected: &[],
                tools: &tools,
                max_output_tokens: None,
                model: None,
            };
            request_body(&settings(), &request, encodings, &mut kept)
        };
        let first = body(&history, "Mode: plan. Be brief.", &encodings);
        history.push(Message::assistant("two", Vec::new()));
        history.push(Message::user("three"));
        let second = body(&history, "Mode: plan. Be brief.", &encodings);
        let afresh = body(&history, "Mode: plan. Be brief.", &Encodings::default());
        assert_eq!(prefix(&first), prefix(&second), "the history grew; the prefix did not change");
        assert_eq!(prefix(&second), prefix(&afresh), "encoded anew, it is the same bytes");
        assert_ne!(first, second);
        let other = body(&history, "Mode: execute. Be brief.", &encodings);
        assert_ne!(prefix(&other), prefix(&second), "a new system prompt is a new prefix");
    }

    #[test]
    fn the_history_kept_encoded_is_sent_as_it_would_be_encoded_afresh() {
        let mut history = History::from(vec![
            Message::user("say \"hi\"\n"),
            Message::assistant("", vec![call("c1", "t", "{}")]),
            Message::tool("c1", "é ✓"),
        ]);
        let mut kept = HistoryEncodings::default();
        let body = |history: &History, kept: &mut HistoryEncodings| {
            let request = ModelRequest::of_history("s", history);
            request_body(&settings(), &request, &Encodings::default(), kept)
        };
        assert_eq!(body(&history, &mut kept), body(&history, &mut HistoryEncodings::default()));
        history.push(Message::assistant("ok", Vec::new()));
        history.push(Message::user("more"));
        assert_eq!(
            body(&history, &mut kept),
            body(&history, &mut HistoryEncodings::default()),
            "after appends"
        );
        let sent: Value = serde_json::from_slice(&body(&history, &mut kept)).unwrap();
        assert_eq!(
            sent["messages"][2]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "é ✓"}),
            "the breakpoint moved on to the new last user message"
        );
        history.rewrite(|messages| messages[0].content = "compacted".into());
        let sent: Value = serde_json::from_slice(&body(&history, &mut kept)).unwrap();
        assert_eq!(sent["messages"][0]["content"][0]["text"], "compacted", "a rewrite is never sent stale");
    }
}
