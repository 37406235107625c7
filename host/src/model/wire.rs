//! The Chat Completions request body, serialized straight from the borrowed request: no
//! copy of the history into a JSON tree on every round trip.

use serde::ser::{Serialize, SerializeSeq, Serializer};
use serde_json::value::RawValue;

use super::encodings::{Encodings, same_tools};
use super::{Message, ModelRequest, Role, ToolCallRequest, ToolDefinition};

/// `POST /chat/completions` body for `request`, as bytes ready to send. The system prompt
/// and the tool list come from `encodings` when they were sent before.
pub fn request_body(
    model: &str,
    temperature: Option<f32>,
    request: &ModelRequest<'_>,
    encodings: &Encodings,
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
        messages: Messages { system: &system.json, request },
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

/// The system prompt (encoded), then the history, then this call's injected messages.
struct Messages<'a> {
    system: &'a RawValue,
    request: &'a ModelRequest<'a>,
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = self.request;
        let mut seq = serializer.serialize_seq(Some(1 + request.history.len() + request.injected.len()))?;
        seq.serialize_element(self.system)?;
        for message in request.messages() {
            seq.serialize_element(encoded(message))?;
        }
        seq.end()
    }
}

/// `message` in the wire format, encoded once and kept with it.
fn encoded(message: &Message) -> &RawValue {
    message.wire.get_or_init(|| {
        let json = serde_json::to_string(&WireMessage::from(message)).expect("a message always serializes");
        RawValue::from_string(json).expect("serde_json writes JSON")
    })
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
    use std::sync::{Arc, OnceLock};

    use serde_json::json;
    use serde_json::value::RawValue;

    use super::*;

    #[test]
    fn the_body_carries_every_message_in_the_wire_format() {
        let history = vec![
            Message::user("hi"),
            Message::assistant(
                "",
                vec![ToolCallRequest { id: "c1".into(), name: "todos_add".into(), arguments: "{}".into() }],
            ),
            Message::tool("c1", "added"),
            Message::assistant("done", Vec::new()),
        ];
        let injected = vec![Message::system("list: empty")];
        let tools = vec![ToolDefinition {
            name: "todos_add".into(),
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
        let body: serde_json::Value =
            serde_json::from_slice(&request_body("m", Some(0.5), &request, &Encodings::default())).unwrap();
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
                        {"id": "c1", "type": "function", "function": {"name": "todos_add", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "added"},
                    {"role": "assistant", "content": "done"},
                    {"role": "system", "content": "list: empty"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "todos_add", "description": "add", "parameters": {"type": "object"}
                }}],
            })
        );
        let bare = ModelRequest { tools: &[], ..request };
        let body: serde_json::Value =
            serde_json::from_slice(&request_body("m", None, &bare, &Encodings::default())).unwrap();
        assert!(body.get("tools").is_none() && body.get("temperature").is_none());
    }

    #[test]
    fn the_system_prompt_and_tools_kept_encoded_are_sent_as_they_are_now() {
        let encodings = Encodings::default();
        let tool = |description: &str| ToolDefinition {
            name: "mode_set".into(),
            description: description.into(),
            parameters: Arc::from(RawValue::from_string(r#"{"type":"object"}"#.to_owned()).unwrap()),
        };
        let sent = |system: &str, tools: &[ToolDefinition]| {
            let request = ModelRequest { session_id: "s", system, history: &[], injected: &[], tools };
            let body: serde_json::Value =
                serde_json::from_slice(&request_body("m", None, &request, &encodings)).unwrap();
            (body["messages"][0]["content"].as_str().unwrap().to_owned(), body["tools"].clone())
        };
        let (plan, switch) = (vec![tool("switch")], vec![tool("switch \"now\"")]);
        assert_eq!(sent("mode: plan", &plan).0, "mode: plan");
        assert_eq!(sent("mode: execute", &plan).0, "mode: execute");
        assert_eq!(sent("mode: plan", &plan).0, "mode: plan");
        assert_eq!(sent("mode: plan", &switch).1[0]["function"]["description"], "switch \"now\"");
        assert_eq!(sent("mode: plan", &plan).1[0]["function"]["description"], "switch");
        assert!(sent("mode: plan", &[]).1.is_null(), "no tools, no `tools` field");
    }

    #[test]
    fn a_message_is_encoded_once_and_sent_the_same_on_every_call() {
        let history = vec![Message::user("say \"hi\"\n"), Message::tool("c1", "é ✓")];
        let request =
            ModelRequest { session_id: "s", system: "", history: &history, injected: &[], tools: &[] };
        let first = request_body("m", None, &request, &Encodings::default());
        assert!(history.iter().all(|message| message.wire.get().is_some()), "kept after the first call");
        assert_eq!(request_body("m", None, &request, &Encodings::default()), first);
        let fresh: Vec<Message> =
            history.iter().map(|m| Message { wire: OnceLock::new(), ..m.clone() }).collect();
        assert_eq!(
            request_body("m", None, &ModelRequest { history: &fresh, ..request }, &Encodings::default()),
            first
        );
        assert_eq!(fresh, history, "the encoding kept does not make messages differ");
    }
}
