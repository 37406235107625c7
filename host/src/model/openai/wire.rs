//! The Chat Completions request body, serialized straight from the borrowed request: no
//! copy of the history into a JSON tree on every round trip.

use serde::ser::{Serialize, SerializeSeq, Serializer};
use serde_json::value::RawValue;

use super::injected::{self, Placement};
use super::params::{Param, Params};
use super::user_turns;
use crate::config::InjectedAs;
use crate::model::encodings::{Encodings, same_tools};
use crate::model::history_encodings::HistoryEncodings;
use crate::model::{Message, ModelRequest, Role, ToolDefinition};
use crate::tools::ToolCall;

/// What shapes a body besides the request itself: the client's settings.
#[derive(Debug, Clone, Copy)]
pub struct BodyOptions<'a> {
    pub model: &'a str,
    pub temperature: Option<f32>,
    /// Sent as `max_tokens`.
    pub max_tokens: Option<u32>,
    /// Ask for a final chunk with the call's usage (`stream_options.include_usage`).
    pub include_usage: bool,
    pub injected_as: InjectedAs,
    /// `[model] extra_body`, merged into the body's top level. A key of it that the host
    /// would set as an optional parameter (`temperature`, `max_tokens`, `stream_options`)
    /// replaces the host's; the client refuses keys that would replace the request itself.
    pub extra_body: &'a serde_json::Map<String, serde_json::Value>,
    /// Parameters this endpoint refused before: left out.
    pub dropped: Params,
}

impl BodyOptions<'_> {
    /// The optional parameters the host itself puts in the body (not `extra_body`): the
    /// ones it may leave out when the endpoint refuses them.
    pub fn sent(&self) -> Params {
        let mut sent = Params::default();
        for (param, wanted) in [
            (Param::StreamOptions, self.include_usage),
            (Param::MaxTokens, self.max_tokens.is_some()),
            (Param::Temperature, self.temperature.is_some()),
        ] {
            if wanted && !self.dropped.contains(param) && !self.extra_body.contains_key(param.name()) {
                sent.insert(param);
            }
        }
        sent
    }
}

/// `POST /chat/completions` body for `request`, as bytes ready to send. The system prompt
/// and the tool list come from `encodings` when they were sent before, the history's
/// messages from `history` (the session's own) when they were.
pub fn request_body(
    options: &BodyOptions<'_>,
    request: &ModelRequest<'_>,
    encodings: &Encodings,
    history: &mut HistoryEncodings,
) -> Vec<u8> {
    let placement = injected::place(request.injected, request.history, options.injected_as);
    // With text appended, the system message is this call's own: encoded afresh, not kept.
    let (kept_system, fresh_system);
    let system: &RawValue = match &placement.system {
        Some(suffix) => {
            fresh_system =
                encode(&WireMessage::text(Role::System, &injected::append(request.system, suffix)));
            &fresh_system
        }
        None => {
            kept_system = encodings.system.get_or_encode(
                |kept| kept == request.system,
                || request.system.to_owned(),
                || to_json(&WireMessage::text(Role::System, request.system)),
            );
            &kept_system.json
        }
    };
    let tools = (!request.tools.is_empty()).then(|| {
        encodings.tools.get_or_encode(
            |kept| same_tools(kept, request.tools),
            || request.tools.to_vec(),
            || to_json(&Tools(request.tools)),
        )
    });
    let sent = options.sent();
    let body = ChatRequest {
        model: options.model,
        messages: Messages {
            system,
            history: history.of(request.history, |message| encode(&WireMessage::from(message))),
            messages: request.history,
            placement: &placement,
        },
        stream: true,
        stream_options: sent.contains(Param::StreamOptions).then_some(StreamOptions { include_usage: true }),
        tools: tools.as_ref().map(|tools| &*tools.json),
        temperature: options.temperature.filter(|_| sent.contains(Param::Temperature)),
        max_tokens: options.max_tokens.filter(|_| sent.contains(Param::MaxTokens)),
        extra: options.extra_body,
    };
    serde_json::to_vec(&body).expect("a request body is plain data and always serializes")
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data always serializes")
}

#[derive(serde::Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: Messages<'a>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(flatten)]
    extra: &'a serde_json::Map<String, serde_json::Value>,
}

#[derive(serde::Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// The system prompt and the history (encoded; a run of user messages as one, see
/// `user_turns.rs`), then this call's injected messages where `placement` puts them.
struct Messages<'a> {
    system: &'a RawValue,
    /// `messages`' kept encodings, one each.
    history: &'a [Box<RawValue>],
    messages: &'a [Message],
    placement: &'a Placement<'a>,
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let placement = self.placement;
        let mut seq = serializer.serialize_seq(None)?;
        seq.serialize_element(self.system)?;
        let into_last = placement.user.as_deref().filter(|_| placement.merge_into_last);
        for run in user_turns::runs(self.messages) {
            let last = run.end == self.messages.len();
            if run.len() == 1 && !(last && into_last.is_some()) {
                seq.serialize_element(&self.history[run.start])?;
                continue;
            }
            // Encoded afresh on every call, beside the kept encodings it stands for.
            let mut text = user_turns::joined(&self.messages[run]);
            if let Some(injected) = into_last.filter(|_| last) {
                text = injected::append(&text, injected);
            }
            seq.serialize_element(&WireMessage::text(Role::User, &text))?;
        }
        if let Some(user) = placement.user.as_deref().filter(|_| into_last.is_none()) {
            seq.serialize_element(&WireMessage::text(Role::User, user))?;
        }
        for message in placement.as_given {
            seq.serialize_element(&WireMessage::from(message))?;
        }
        seq.end()
    }
}

/// `message` in the wire format, as JSON text to keep or send: serde_json's own output, taken
/// as it is (`RawValue::from_string` would parse it again to check it).
fn encode(message: &WireMessage<'_>) -> Box<RawValue> {
    serde_json::value::to_raw_value(message).expect("plain data always serializes")
}

/// One message in the wire format: an assistant message with tool calls has `null` content
/// when it said nothing; a tool result names the call it answers. Nothing else of a message
/// is sent: the model's shown reasoning is never stored in one, so never sent back.
#[derive(serde::Serialize)]
struct WireMessage<'a> {
    role: Role,
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Calls<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

impl<'a> WireMessage<'a> {
    fn text(role: Role, content: &'a str) -> Self {
        Self { role, content: Some(content), tool_calls: None, tool_call_id: None }
    }
}

impl<'a> From<&'a Message> for WireMessage<'a> {
    fn from(message: &'a Message) -> Self {
        match message.role {
            Role::Assistant if !message.tool_calls.is_empty() => Self {
                role: Role::Assistant,
                content: (!message.content.is_empty()).then_some(message.content.as_str()),
                tool_calls: Some(Calls(&message.tool_calls)),
                tool_call_id: None,
            },
            Role::Tool => Self {
                tool_call_id: message.tool_call_id.as_deref(),
                ..Self::text(Role::Tool, &message.content)
            },
            role => Self::text(role, &message.content),
        }
    }
}

struct Calls<'a>(&'a [ToolCall]);

impl Serialize for Calls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|call| Typed {
            kind: "function",
            function: WireCall { name: &call.name, arguments: sendable_arguments(&call.arguments) },
            id: Some(&call.id),
        }))
    }
}

/// A stored call's arguments as they may go back to the endpoint. A reply cut at its output
/// limit, or a model that wrote broken JSON, leaves arguments that are not a JSON object; the
/// history keeps them as they came (the loop answered the call with an error saying so), but
/// servers that render the history through a chat template parse them and refuse the whole
/// request (llama.cpp: "Failed to parse tool call arguments as JSON"), so `{}` goes instead.
fn sendable_arguments(arguments: &str) -> &str {
    let object = arguments.trim_start().starts_with('{')
        && serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_ok();
    if object { arguments } else { "{}" }
}

struct Tools<'a>(&'a [ToolDefinition]);

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|tool| Typed { kind: "function", function: tool, id: None }))
    }
}

/// `{"id"?, "type": "function", "function": {...}}`, the wrapper both tool calls and tool
/// definitions wear.
#[derive(serde::Serialize)]
struct Typed<'a, F> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(rename = "type")]
    kind: &'static str,
    function: F,
}

#[derive(serde::Serialize)]
struct WireCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::value::RawValue;
    use serde_json::{Value, json};

    use super::*;
    use crate::conversation::History;

    fn no_extra() -> &'static serde_json::Map<String, Value> {
        static EMPTY: std::sync::OnceLock<serde_json::Map<String, Value>> = std::sync::OnceLock::new();
        EMPTY.get_or_init(serde_json::Map::new)
    }

    fn options(injected_as: InjectedAs) -> BodyOptions<'static> {
        BodyOptions {
            model: "m",
            temperature: None,
            max_tokens: None,
            include_usage: false,
            injected_as,
            extra_body: no_extra(),
            dropped: Params::default(),
        }
    }

    fn body_of(options: &BodyOptions<'_>, request: &ModelRequest<'_>, kept: &mut HistoryEncodings) -> Value {
        serde_json::from_slice(&request_body(options, request, &Encodings::default(), kept)).unwrap()
    }

    fn call(id: &str, arguments: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "notes_add".into(), arguments: arguments.into() }
    }

    #[test]
    fn the_body_carries_every_message_in_the_wire_format() {
        let history = History::from(vec![
            Message::user("hi"),
            Message::assistant("", vec![call("c1", "{}")]),
            Message::tool("c1", "added"),
            Message::assistant("done", Vec::new()),
        ]);
        let injected = vec![Message::system("list: empty")];
        let tools = vec![ToolDefinition {
            name: "notes_add".into(),
            description: "add".into(),
            parameters: Arc::from(RawValue::from_string(r#"{"type":"object"}"#.to_owned()).unwrap()),
        }];
        let request = ModelRequest {
            session_id: "s",
            system: "be brief",
            history: &history,
            injected: &injected,
            tools: &tools,
            max_output_tokens: None,
            model: None,
        };
        let full = BodyOptions {
            temperature: Some(0.5),
            max_tokens: Some(512),
            include_usage: true,
            ..options(InjectedAs::System)
        };
        assert_eq!(
            body_of(&full, &request, &mut fresh()),
            json!({
                "model": "m",
                "stream": true,
                "stream_options": {"include_usage": true},
                "temperature": 0.5,
                "max_tokens": 512,
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "notes_add", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "added"},
                    {"role": "assistant", "content": "done"},
                    {"role": "system", "content": "list: empty"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "notes_add", "description": "add", "parameters": {"type": "object"}
                }}],
            })
        );
        let bare = ModelRequest { tools: &[], ..request };
        let body = body_of(&options(InjectedAs::System), &bare, &mut fresh());
        for absent in ["tools", "temperature", "max_tokens", "stream_options"] {
            assert!(body.get(absent).is_none(), "{absent}: {body}");
        }
    }

    #[test]
    fn injected_messages_go_as_one_user_message_merged_into_the_users_turn() {
        let injected = vec![Message::system("### Reminders\n* #1 a"), Message::system("notice: b")];
        let mut history = History::from(vec![Message::user("do it")]);
        let mut kept = fresh();
        let sent = |history: &History, kept: &mut HistoryEncodings, how: InjectedAs| {
            let request = ModelRequest {
                session_id: "s",
                system: "sys",
                history,
                injected: &injected,
                tools: &[],
                max_output_tokens: None,
                model: None,
            };
            body_of(&options(how), &request, kept)["messages"].clone()
        };
        assert_eq!(
            sent(&history, &mut kept, InjectedAs::User),
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "do it\n\n### Reminders\n* #1 a\n\nnotice: b"},
            ])
        );
        history.push(Message::assistant("", vec![call("c1", "{}")]));
        history.push(Message::tool("c1", "ok"));
        let messages = sent(&history, &mut kept, InjectedAs::User);
        assert_eq!(
            messages[1],
            json!({"role": "user", "content": "do it"}),
            "the kept encoding is the plain turn"
        );
        assert_eq!(messages[4], json!({"role": "user", "content": "### Reminders\n* #1 a\n\nnotice: b"}));
        assert_eq!(messages.as_array().unwrap().len(), 5);
        assert_eq!(
            messages,
            sent(&history, &mut fresh(), InjectedAs::User),
            "kept encodings send what fresh ones do"
        );

        let first_system = sent(&history, &mut kept, InjectedAs::FirstSystem);
        assert_eq!(
            first_system[0],
            json!({"role": "system", "content": "sys\n\n### Reminders\n* #1 a\n\nnotice: b"})
        );
        assert_eq!(first_system.as_array().unwrap().len(), 4, "nothing after the history");
        let system_count =
            |messages: &Value| messages.as_array().unwrap().iter().filter(|m| m["role"] == "system").count();
        assert_eq!(system_count(&first_system), 1);
        assert_eq!(system_count(&sent(&history, &mut kept, InjectedAs::System)), 3);
        // The system prompt kept encoded is never the one with a call's text appended.
        let encodings = Encodings::default();
        let system_sent = |injected: &[Message]| {
            let request = ModelRequest {
                session_id: "s",
                system: "sys",
                history: &history,
                injected,
                tools: &[],
                max_output_tokens: None,
                model: None,
            };
            let body = request_body(&options(InjectedAs::FirstSystem), &request, &encodings, &mut fresh());
            serde_json::from_slice::<Value>(&body).unwrap()["messages"][0]["content"].clone()
        };
        assert_eq!(system_sent(&[]), "sys");
        assert_ne!(system_sent(&injected), "sys");
        assert_eq!(system_sent(&[]), "sys");
    }

    #[test]
    fn a_prompt_left_unanswered_goes_with_the_next_one_as_one_user_turn() {
        // A turn the endpoint never answered, then the retry: the history keeps both.
        let injected = vec![Message::system("notice: b")];
        let mut history = History::from(vec![Message::user("first try"), Message::user("second try")]);
        let mut kept = fresh();
        let mut sent = |history: &History, injected: &[Message]| {
            let request = ModelRequest {
                session_id: "s",
                system: "sys",
                history,
                injected,
                tools: &[],
                max_output_tokens: None,
                model: None,
            };
            body_of(&options(InjectedAs::User), &request, &mut kept)["messages"].clone()
        };
        assert_eq!(
            sent(&history, &injected),
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "first try\n\nsecond try\n\nnotice: b"},
            ])
        );
        history.push(Message::assistant("answered", Vec::new()));
        history.push(Message::user("thanks"));
        assert_eq!(
            sent(&history, &[]),
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "first try\n\nsecond try"},
                {"role": "assistant", "content": "answered"},
                {"role": "user", "content": "thanks"},
            ])
        );
        assert_eq!(history.len(), 4, "the history keeps every prompt as typed");
    }

    #[test]
    fn arguments_that_are_not_a_json_object_go_back_as_an_empty_one() {
        let cut = r#"{"notes": [{"title": "Wri"#;
        let history = History::from(vec![
            Message::user("go"),
            Message::assistant(
                "",
                vec![call("a", cut), call("b", r#"{"ok": 1}"#), call("c", "[1]"), call("d", "")],
            ),
        ]);
        let request = ModelRequest::of_history("s", &history);
        let body = body_of(&options(InjectedAs::User), &request, &mut fresh());
        let sent: Vec<&str> = body["messages"][2]["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|call| call["function"]["arguments"].as_str().unwrap())
            .collect();
        assert_eq!(sent, ["{}", r#"{"ok": 1}"#, "{}", "{}"]);
        assert_eq!(history[1].tool_calls[0].arguments, cut, "the history keeps what the model wrote");
    }

    #[test]
    fn extra_body_is_merged_and_dropped_parameters_are_left_out() {
        let extra: serde_json::Map<String, Value> =
            serde_json::from_value(json!({"top_k": 20, "temperature": 0.9})).unwrap();
        let mut dropped = Params::default();
        dropped.insert(Param::StreamOptions);
        let options = BodyOptions {
            temperature: Some(0.1),
            max_tokens: Some(64),
            include_usage: true,
            extra_body: &extra,
            dropped,
            ..options(InjectedAs::User)
        };
        let history = History::default();
        let request = ModelRequest::of_history("s", &history);
        let text =
            String::from_utf8(request_body(&options, &request, &Encodings::default(), &mut fresh())).unwrap();
        assert_eq!(
            text.matches("\"temperature\"").count(),
            1,
            "extra_body's value replaces the host's: {text}"
        );
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!((body["top_k"].clone(), body["temperature"].clone()), (json!(20), json!(0.9)));
        assert_eq!(body["max_tokens"], 64);
        assert!(body.get("stream_options").is_none(), "dropped: {body}");
        let mut expected = Params::default();
        expected.insert(Param::MaxTokens);
        assert_eq!(options.sent(), expected, "only what the host itself sends may be dropped");
    }

    #[test]
    fn the_system_prompt_and_tools_kept_encoded_are_sent_as_they_are_now() {
        let encodings = Encodings::default();
        let tool = |description: &str| ToolDefinition {
            name: "notes_sort".into(),
            description: description.into(),
            parameters: Arc::from(RawValue::from_string(r#"{"type":"object"}"#.to_owned()).unwrap()),
        };
        let sent = |system: &str, tools: &[ToolDefinition]| {
            let history = History::default();
            let request = ModelRequest {
                session_id: "s",
                system,
                history: &history,
                injected: &[],
                tools,
                max_output_tokens: None,
                model: None,
            };
            let body: Value = serde_json::from_slice(&request_body(
                &options(InjectedAs::User),
                &request,
                &encodings,
                &mut fresh(),
            ))
            .unwrap();
            (body["messages"][0]["content"].as_str().unwrap().to_owned(), body["tools"].clone())
        };
        let (plain, quoted) = (vec![tool("sort")], vec![tool("sort \"now\"")]);
        assert_eq!(sent("style: terse", &plain).0, "style: terse");
        assert_eq!(sent("style: verbose", &plain).0, "style: verbose");
        assert_eq!(sent("style: terse", &plain).0, "style: terse");
        assert_eq!(sent("style: terse", &quoted).1[0]["function"]["description"], "sort \"now\"");
        assert_eq!(sent("style: terse", &plain).1[0]["function"]["description"], "sort");
        assert!(sent("style: terse", &[]).1.is_null(), "no tools, no `tools` field");
    }

    #[test]
    fn the_history_kept_encoded_is_sent_as_it_would_be_encoded_afresh() {
        let mut history = History::from(vec![Message::user("say \"hi\"\n"), Message::tool("c1", "é ✓")]);
        let mut kept = fresh();
        let body = |history: &History, kept: &mut HistoryEncodings| {
            let request = ModelRequest::of_history("s", history);
            request_body(&options(InjectedAs::User), &request, &Encodings::default(), kept)
        };
        assert_eq!(body(&history, &mut kept), body(&history, &mut fresh()));
        history.push(Message::assistant("ok", Vec::new()));
        assert_eq!(body(&history, &mut kept), body(&history, &mut fresh()), "after an append");
        history.rewrite(|messages| messages[0].content = "compacted".into());
        let sent: Value = serde_json::from_slice(&body(&history, &mut kept)).unwrap();
        assert_eq!(sent["messages"][1]["content"], "compacted", "a rewrite is never sent stale");
    }

    fn fresh() -> HistoryEncodings {
        HistoryEncodings::default()
    }
}
