//! The Chat Completions request body, serialized straight from the borrowed request: no
//! copy of the history into a JSON tree on every round trip.

use serde::ser::{Serialize, SerializeSeq, Serializer};
use serde_json::value::RawValue;

use super::encodings::{Encodings, same_tools};
use super::history_encodings::HistoryEncodings;
use super::{Message, ModelRequest, Role, ToolCallRequest, ToolDefinition};

/// `POST /chat/completions` body for `request`, as bytes ready to send. The system prompt
/// and the tool list come from `encodings` when they were sent before, the history's
/// messages from `history` (the session's own) when they were.
pub fn request_body(
    model: &str,
    temperature: Option<f32>,
    request: &ModelRequest<'_>,
    encodings: &Encodings,
    history: &mut HistoryEncodings,
) -> Vec<u8> {
    let system = encodings.system.get_or_encode(
        |kept| kept == request.system,
        || request.system.to_owned(),
        || to_json(&WireMessage::text(Role::System, request.system)),
    );
    let tools = (!request.tools.is_empty()).then(|| {
        encodings.tools.get_or_encode(
            |kept| same_tools(kept, request.tools),
            || request.tools.to_vec(),
            || to_json(&Tools(request.tools)),
        )
    });
    let body = ChatRequest {
        model,
        messages: Messages {
            system: &system.json,
            history: history.of(request.history, encode),
            injected: request.injected,
        },
        stream: true,
        tools: tools.as_ref().map(|tools| &*tools.json),
        temperature,
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
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

/// The system prompt and the history (encoded), then this call's injected messages.
struct Messages<'a> {
    system: &'a RawValue,
    history: &'a [Box<RawValue>],
    injected: &'a [Message],
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(1 + self.history.len() + self.injected.len()))?;
        seq.serialize_element(self.system)?;
        for message in self.history {
            seq.serialize_element(message)?;
        }
        for message in self.injected {
            seq.serialize_element(&WireMessage::from(message))?;
        }
        seq.end()
    }
}

/// `message` in the wire format, as text to keep.
fn encode(message: &Message) -> Box<RawValue> {
    RawValue::from_string(to_json(&WireMessage::from(message))).expect("serde_json writes JSON")
}

/// One message in the wire format: an assistant message with tool calls has `null` content
/// when it said nothing; a tool result names the call it answers.
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

struct Calls<'a>(&'a [ToolCallRequest]);

impl Serialize for Calls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|call| Typed {
            kind: "function",
            function: WireCall { name: &call.name, arguments: &call.arguments },
            id: Some(&call.id),
        }))
    }
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

    use serde_json::json;
    use serde_json::value::RawValue;

    use super::*;
    use crate::conversation::History;

    #[test]
    fn the_body_carries_every_message_in_the_wire_format() {
        let history = History::from(vec![
            Message::user("hi"),
            Message::assistant(
                "",
                vec![ToolCallRequest { id: "c1".into(), name: "notes_add".into(), arguments: "{}".into() }],
            ),
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
        };
        let body: serde_json::Value = serde_json::from_slice(&request_body(
            "m",
            Some(0.5),
            &request,
            &Encodings::default(),
            &mut fresh(),
        ))
        .unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "stream": true,
                "temperature": 0.5,
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
        let body: serde_json::Value =
            serde_json::from_slice(&request_body("m", None, &bare, &Encodings::default(), &mut fresh()))
                .unwrap();
        assert!(body.get("tools").is_none() && body.get("temperature").is_none());
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
            let request = ModelRequest { session_id: "s", system, history: &history, injected: &[], tools };
            let body: serde_json::Value =
                serde_json::from_slice(&request_body("m", None, &request, &encodings, &mut fresh())).unwrap();
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
            let request = ModelRequest { session_id: "s", system: "", history, injected: &[], tools: &[] };
            request_body("m", None, &request, &Encodings::default(), kept)
        };
        assert_eq!(body(&history, &mut kept), body(&history, &mut fresh()));
        history.push(Message::assistant("ok", Vec::new()));
        assert_eq!(body(&history, &mut kept), body(&history, &mut fresh()), "after an append");
        history.rewrite(|messages| messages[0].content = "compacted".into());
        let sent: serde_json::Value = serde_json::from_slice(&body(&history, &mut kept)).unwrap();
        assert_eq!(sent["messages"][1]["content"], "compacted", "a rewrite is never sent stale");
    }

    fn fresh() -> HistoryEncodings {
        HistoryEncodings::default()
    }
}
