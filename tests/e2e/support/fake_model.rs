//! A local OpenAI-compatible Chat Completions server for tests: answers from a queue of
//! scripted replies (streamed or whole), records every request, and can misbehave on cue.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    text: String,
    tool_calls: Vec<(String, String, String)>,
    stream: bool,
    fault: Fault,
    /// Answered only once this is notified: holds a model call in flight while the test acts.
    gate: Option<Arc<tokio::sync::Notify>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Fault {
    None,
    Status(u16),
    /// An error status whose body repeats the request's `Authorization` header, as some
    /// gateways and debugging proxies do.
    StatusEchoingAuth(u16),
    CutMidStream,
    NotJson,
    Hang,
    /// Starts an event and streams its line forever, never ending it.
    EndlessLine,
    /// A 307 pointing elsewhere.
    Redirect(String),
    /// A body exactly as a real server sent it (a captured fixture), with its status and type.
    Raw {
        status: u16,
        content_type: String,
        body: bytes::Bytes,
    },
}

impl Reply {
    /// A streamed text reply.
    pub fn text(text: &str) -> Self {
        Self { text: text.to_owned(), tool_calls: Vec::new(), stream: true, fault: Fault::None, gate: None }
    }

    /// A streamed reply with one tool call (`arguments` is sent as given, JSON or not).
    pub fn tool(name: &str, arguments: &str) -> Self {
        Self::text("").and_tool(name, arguments)
    }

    /// Adds another tool call to the reply.
    pub fn and_tool(mut self, name: &str, arguments: &str) -> Self {
        let id = format!("call_{}", self.tool_calls.len() + 1);
        self.tool_calls.push((id, name.to_owned(), arguments.to_owned()));
        self
    }

    /// Sets the id of the last tool call.
    pub fn with_id(mut self, id: &str) -> Self {
        if let Some(call) = self.tool_calls.last_mut() {
            call.0 = id.to_owned();
        }
        self
    }

    /// Sends the reply as one JSON body instead of a stream.
    pub fn whole(mut self) -> Self {
        self.stream = false;
        self
    }

    /// Holds the answer until `gate` is notified (the request is recorded at once).
    pub fn held_until(mut self, gate: &Arc<tokio::sync::Notify>) -> Self {
        self.gate = Some(gate.clone());
        self
    }

    /// Answers with an HTTP error status.
    pub fn status(code: u16) -> Self {
        Self { fault: Fault::Status(code), ..Self::text("") }
    }

    /// Answers with an HTTP error status whose body quotes the `Authorization` header.
    pub fn status_echoing_auth(code: u16) -> Self {
        Self { fault: Fault::StatusEchoingAuth(code), ..Self::text("") }
    }

    /// Streams part of the text, then ends the stream without finishing the reply.
    pub fn cut(text: &str) -> Self {
        Self { fault: Fault::CutMidStream, ..Self::text(text) }
    }

    /// Streams an event whose data is not JSON.
    pub fn not_json() -> Self {
        Self { fault: Fault::NotJson, ..Self::text("") }
    }

    /// Starts a stream and never finishes it.
    pub fn hang() -> Self {
        Self { fault: Fault::Hang, ..Self::text("") }
    }

    /// Streams one `data:` line that never ends (an endpoint gone wrong, or hostile).
    pub fn endless_line() -> Self {
        Self { fault: Fault::EndlessLine, ..Self::text("") }
    }

    /// Answers 307 Temporary Redirect to `location`.
    pub fn redirect(location: &str) -> Self {
        Self { fault: Fault::Redirect(location.to_owned()), ..Self::text("") }
    }

    /// Answers with `body` byte for byte (a reply captured from a real server), with `status`
    /// and `content_type`.
    pub fn raw(status: u16, content_type: &str, body: impl Into<bytes::Bytes>) -> Self {
        let fault = Fault::Raw { status, content_type: content_type.to_owned(), body: body.into() };
        Self { fault, ..Self::text("") }
    }
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    /// Answers when the queue is empty (load tests); `None` means answer 500.
    fallback: Mutex<Option<Reply>>,
    requests: Mutex<Vec<Value>>,
    authorizations: Mutex<Vec<Option<String>>>,
}

/// A running fake endpoint; stops when the test's runtime ends.
pub struct FakeModel {
    address: SocketAddr,
    shared: Arc<Shared>,
}

impl FakeModel {
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let app = axum::Router::new().route("/v1/chat/completions", post(answer)).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let address = listener.local_addr().expect("local address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { address, shared }
    }

    /// The base URL to configure: `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    pub fn push(&self, reply: Reply) -> &Self {
        self.shared.replies.lock().unwrap().push_back(reply);
        self
    }

    /// The reply given whenever the queue is empty.
    pub fn fallback(&self, reply: Reply) -> &Self {
        *self.shared.fallback.lock().unwrap() = Some(reply);
        self
    }

    /// Every request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// The `Authorization` header of every request.
    pub fn authorizations(&self) -> Vec<Option<String>> {
        self.shared.authorizations.lock().unwrap().clone()
    }
}

async fn answer(State(shared): State<Arc<Shared>>, headers: axum::http::HeaderMap, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    shared.requests.lock().unwrap().push(request);
    let authorization = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    shared.authorizations.lock().unwrap().push(authorization.clone());
    let queued = shared.replies.lock().unwrap().pop_front();
    let Some(reply) = queued.or_else(|| shared.fallback.lock().unwrap().clone()) else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "the fake model has no reply queued").into_response();
    };
    if let Some(gate) = &reply.gate {
        gate.notified().await;
    }
    match reply.fault {
        Fault::Status(code) => {
            return (StatusCode::from_u16(code).unwrap(), format!("scripted status {code}")).into_response();
        }
        Fault::Redirect(location) => {
            return (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, location.clone())], "")
                .into_response();
        }
        Fault::StatusEchoingAuth(code) => {
            let sent = authorization.unwrap_or_default();
            let body = format!("scripted status {code}; you sent: {sent}");
            return (StatusCode::from_u16(code).unwrap(), body).into_response();
        }
        Fault::Hang => {
            let first = futures_util::stream::once(async {
                Ok::<_, std::io::Error>(chunk(json!({"content": "…"})))
            });
            let never = futures_util::stream::pending();
            return sse(Body::from_stream(futures_util::StreamExt::chain(first, never)));
        }
        Fault::EndlessLine => {
            let start = futures_util::stream::once(async { Ok::<_, std::io::Error>("data: \"".to_owned()) });
            let endless = futures_util::stream::repeat_with(|| Ok("x".repeat(64 << 10)));
            return sse(Body::from_stream(futures_util::StreamExt::chain(start, endless)));
        }
        Fault::NotJson => return sse(Body::from("data: {this is not json\n\n")),
        Fault::Raw { status, content_type, body } => {
            return Response::builder()
                .status(status)
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(body))
                .unwrap();
        }
        Fault::CutMidStream => return sse(Body::from(chunk(json!({"content": reply.text})))),
        Fault::None => {}
    }
    if !reply.stream {
        let calls: Vec<Value> = reply
            .tool_calls
            .iter()
            .map(|(id, name, arguments)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}))
            .collect();
        let mut message = json!({"role": "assistant", "content": reply.text});
        if !calls.is_empty() {
            message["tool_calls"] = calls.into();
        }
        let finish = if reply.tool_calls.is_empty() { "stop" } else { "tool_calls" };
        return axum::Json(json!({"choices": [{"index": 0, "message": message, "finish_reason": finish}]}))
            .into_response();
    }
    let mut body = String::new();
    let middle = reply.text.char_indices().nth(reply.text.chars().count() / 2).map_or(0, |(i, _)| i);
    for piece in [&reply.text[..middle], &reply.text[middle..]] {
        if !piece.is_empty() {
            body.push_str(&chunk(json!({"content": piece})));
        }
    }
    for (index, (id, name, arguments)) in reply.tool_calls.iter().enumerate() {
        let split = arguments.len() / 2;
        let split = (0..=split).rev().find(|&i| arguments.is_char_boundary(i)).unwrap_or(0);
        body.push_str(&chunk(json!({"tool_calls": [{"index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": &arguments[..split]}}]})));
        body.push_str(&chunk(
            json!({"tool_calls": [{"index": index, "function": {"arguments": &arguments[split..]}}]}),
        ));
    }
    let finish = if reply.tool_calls.is_empty() { "stop" } else { "tool_calls" };
    body.push_str(&format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    ));
    body.push_str("data: [DONE]\n\n");
    sse(Body::from(body))
}

fn chunk(delta: Value) -> String {
    format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]}))
}

fn sse(body: Body) -> Response {
    Response::builder().header(header::CONTENT_TYPE, "text/event-stream").body(body).unwrap()
}
