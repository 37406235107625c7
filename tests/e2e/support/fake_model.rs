//! A local OpenAI-compatible Chat Completions server for tests: answers from a queue of
//! scripted replies (streamed, whole, or a real server's body replayed byte for byte),
//! records every request, can misbehave on cue, and can check requests the way strict real
//! servers do (see [`Check`]). The server, the queue and the record are the shared ones of
//! `fake_endpoint`; this file is the Chat Completions wire format.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::fake_endpoint::{self, Endpoint, Received, broken_after, event_stream, halves};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    text: String,
    tool_calls: Vec<(String, String, String)>,
    stream: bool,
    fault: Fault,
    /// For [`Reply::raw`]: the `Content-Type` to serve the body under.
    content_type: String,
    /// Answered only once this is notified: holds a model call in flight while the test acts.
    gate: Option<Arc<tokio::sync::Notify>>,
    /// The `finish_reason` sent, when not the usual one (`stop`, or `tool_calls`).
    finish_reason: Option<String>,
    /// The `usage` object sent (in a last chunk of its own when streamed).
    usage: Option<Value>,
    /// Streamed as `reasoning_content` deltas before the text.
    reasoning: String,
    /// The stream pauses after this many bytes of the text until the gate is notified.
    pause: Option<(usize, Arc<tokio::sync::Notify>)>,
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
    /// The body given, served as it is with status 200.
    Raw(String),
    /// An error status with the body given.
    StatusBody(u16, String),
    /// Never answers, not even the response head.
    Silent,
    /// Streams the text (when any), then breaks the connection mid-body.
    Dropped,
}

/// A refusal real servers make of a request, checked before any reply is given: a request
/// that fails it is answered as that server answers it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Check {
    /// Strict chat templates (Qwen3.5's, Mistral's, Apertus's): a `system` message anywhere
    /// but first is refused with llama.cpp's HTTP 500 and the template's words.
    SystemFirst,
    /// llama.cpp's server parses every stored tool call's `arguments`: text that is not JSON
    /// fails the whole request with HTTP 500.
    ArgumentsParse,
    /// Mistral's templates: every tool call id is 9 characters `[A-Za-z0-9]`.
    MistralIds,
}

impl Reply {
    /// A streamed text reply.
    pub fn text(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            tool_calls: Vec::new(),
            stream: true,
            fault: Fault::None,
            content_type: "text/event-stream".to_owned(),
            gate: None,
            finish_reason: None,
            usage: None,
            reasoning: String::new(),
            pause: None,
        }
    }

    /// A body a real server sent (an SSE stream, say), served byte for byte with status 200
    /// as `text/event-stream` unless [`Reply::content_type`] says otherwise.
    pub fn raw(body: &str) -> Self {
        Self { fault: Fault::Raw(body.to_owned()), ..Self::text("") }
    }

    /// The `Content-Type` a [`Reply::raw`] body is served under.
    pub fn content_type(mut self, content_type: &str) -> Self {
        content_type.clone_into(&mut self.content_type);
        self
    }

    /// Answers with an HTTP error status and the body given (served as JSON).
    pub fn status_body(code: u16, body: &str) -> Self {
        Self { fault: Fault::StatusBody(code, body.to_owned()), ..Self::text("") }
    }

    /// Never answers at all: the response head never comes.
    pub fn silent() -> Self {
        Self { fault: Fault::Silent, ..Self::text("") }
    }

    /// Starts a stream, streams `text` (none when empty), then breaks the connection.
    pub fn dropped(text: &str) -> Self {
        Self { fault: Fault::Dropped, ..Self::text(text) }
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

    /// Ends the reply with this `finish_reason` (`length`: cut at the output limit).
    pub fn finish_reason(mut self, reason: &str) -> Self {
        self.finish_reason = Some(reason.to_owned());
        self
    }

    /// Reports this usage, as `stream_options.include_usage` asks a server to.
    pub fn usage(mut self, prompt_tokens: u64, cached_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = Some(json!({
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        }));
        self
    }

    /// Streams `reasoning` as `reasoning_content` deltas before the text.
    pub fn reasoning(mut self, reasoning: &str) -> Self {
        self.reasoning = reasoning.to_owned();
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

    /// Streams the text up to the end of `before` (which it starts with), then waits for
    /// `gate` before the rest: a reply caught mid-line.
    pub fn paused_after(mut self, before: &str, gate: &Arc<tokio::sync::Notify>) -> Self {
        assert!(self.text.starts_with(before), "the pause is within the text");
        self.pause = Some((before.len(), gate.clone()));
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
}

#[derive(Default)]
struct Shared {
    /// With no reply queued and no fallback, a request is answered 500.
    endpoint: Endpoint<Reply>,
    checks: Mutex<Vec<Check>>,
    /// Replies for a turn whose prompt holds a phrase (see [`FakeModel::on_prompt`]).
    on_prompt: Mutex<Vec<(String, std::collections::VecDeque<Reply>)>>,
    on_model: Mutex<Vec<(String, std::collections::VecDeque<Reply>)>>,
}

/// A running fake endpoint; stops when the test's runtime ends.
pub struct FakeModel {
    address: SocketAddr,
    shared: Arc<Shared>,
}

impl FakeModel {
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let address = fake_endpoint::serve("/v1/chat/completions", shared.clone(), answer).await;
        Self { address, shared }
    }

    /// The base URL to configure: `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    pub fn push(&self, reply: Reply) -> &Self {
        self.shared.endpoint.push(reply);
        self
    }

    /// The reply given whenever the queue is empty.
    pub fn fallback(&self, reply: Reply) -> &Self {
        self.shared.endpoint.fallback(reply);
        self
    }

    /// Answers the model calls of a turn whose prompt (the last user message) holds `phrase`
    /// with `replies`, in order, before the queue: for a client that sends prompts of its own
    /// in an order the test does not fix.
    pub fn on_prompt(&self, phrase: &str, replies: impl IntoIterator<Item = Reply>) -> &Self {
        self.shared.on_prompt.lock().unwrap().push((phrase.to_owned(), replies.into_iter().collect()));
        self
    }

    /// Answers the requests whose `model` is `model` with `replies`, in order, before any
    /// other script: a child agent's own model picks its own script, whatever runs beside it.
    pub fn on_model(&self, model: &str, replies: impl IntoIterator<Item = Reply>) -> &Self {
        self.shared.on_model.lock().unwrap().push((model.to_owned(), replies.into_iter().collect()));
        self
    }

    /// The requests sent to `model`, in order.
    pub fn requests_to(&self, model: &str) -> Vec<Value> {
        self.requests().into_iter().filter(|request| request["model"] == model).collect()
    }

    /// Checks every request from now on as a strict server would (see [`Check`]).
    pub fn check(&self, check: Check) -> &Self {
        self.shared.checks.lock().unwrap().push(check);
        self
    }

    /// Every request body received, in order (`Null` for one that is not JSON).
    pub fn requests(&self) -> Vec<Value> {
        self.shared.endpoint.received().into_iter().map(|request| request.json).collect()
    }

    /// The `Authorization` header of every request.
    pub fn authorizations(&self) -> Vec<Option<String>> {
        let received = self.shared.endpoint.received();
        received.iter().map(|request| request.header(header::AUTHORIZATION.as_str())).collect()
    }
}

/// The next of the replies [`FakeModel::on_prompt`] set for the prompt of `request`, if any.
/// The turn's prompt is the first user message after the last reply that called no tools
/// (messages injected after a tool's result come later).
fn prompted_reply(shared: &Shared, request: &Value) -> Option<Reply> {
    let messages = request["messages"].as_array()?;
    let turn_start = messages
        .iter()
        .rposition(|m| m["role"] == "assistant" && m.get("tool_calls").is_none_or(Value::is_null))
        .map_or(0, |ended| ended + 1);
    let prompt = messages[turn_start..].iter().find(|m| m["role"] == "user")?["content"].to_string();
    let mut scripts = shared.on_prompt.lock().unwrap();
    scripts.iter_mut().find(|(phrase, _)| prompt.contains(phrase.as_str()))?.1.pop_front()
}

async fn answer(shared: Arc<Shared>, mut received: Received) -> Response {
    let request = received.json.clone();
    let authorization = received.header(header::AUTHORIZATION.as_str());
    let checks = shared.checks.lock().unwrap().clone();
    let refusal = checks.iter().find_map(|check| refused(*check, &request));
    received.refused = refusal.as_ref().map(|(message, _)| message.clone());
    shared.endpoint.record(received);
    if let Some((_, response)) = refusal {
        return response;
    }
    let own_model = || {
        let model = request["model"].as_str()?;
        let mut scripts = shared.on_model.lock().unwrap();
        scripts.iter_mut().find(|(name, _)| name == model)?.1.pop_front()
    };
    let reply =
        own_model().or_else(|| prompted_reply(&shared, &request)).or_else(|| shared.endpoint.next_reply());
    let Some(reply) = reply else {
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
            return event_stream(Body::from_stream(futures_util::StreamExt::chain(first, never)));
        }
        Fault::EndlessLine => {
            let start = futures_util::stream::once(async { Ok::<_, std::io::Error>("data: \"".to_owned()) });
            let endless = futures_util::stream::repeat_with(|| Ok("x".repeat(64 << 10)));
            return event_stream(Body::from_stream(futures_util::StreamExt::chain(start, endless)));
        }
        Fault::NotJson => return event_stream(Body::from("data: {this is not json\n\n")),
        Fault::Raw(body) => {
            return Response::builder()
                .header(header::CONTENT_TYPE, reply.content_type)
                .body(Body::from(body))
                .unwrap();
        }
        Fault::StatusBody(code, body) => {
            return (StatusCode::from_u16(code).unwrap(), [(header::CONTENT_TYPE, "application/json")], body)
                .into_response();
        }
        Fault::Silent => return futures_util::future::pending().await,
        Fault::Dropped => {
            let mut sent = vec![chunk(json!({"role": "assistant", "content": null}))];
            if !reply.text.is_empty() {
                sent.push(chunk(json!({"content": reply.text})));
            }
            return event_stream(broken_after(sent));
        }
        Fault::CutMidStream => return event_stream(Body::from(chunk(json!({"content": reply.text})))),
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
        let mut body =
            json!({"choices": [{"index": 0, "message": message, "finish_reason": finish_reason(&reply)}]});
        if let Some(usage) = &reply.usage {
            body["usage"] = usage.clone();
        }
        return axum::Json(body).into_response();
    }
    let mut body = String::new();
    if !reply.reasoning.is_empty() {
        body.push_str(&chunk(json!({"reasoning_content": reply.reasoning})));
    }
    if let Some((at, gate)) = &reply.pause {
        let (before, after) = reply.text.split_at(*at);
        let first = chunk(json!({"content": before}));
        let rest = format!(
            "{}data: {}\n\ndata: [DONE]\n\n",
            chunk(json!({"content": after})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason(&reply)}]})
        );
        let gate = gate.clone();
        let first = futures_util::stream::once(async move { Ok::<_, std::io::Error>(first) });
        let rest = futures_util::stream::once(async move {
            gate.notified().await;
            Ok(rest)
        });
        return event_stream(Body::from_stream(futures_util::StreamExt::chain(first, rest)));
    }
    for piece in halves(&reply.text) {
        body.push_str(&chunk(json!({"content": piece})));
    }
    for (index, (id, name, arguments)) in reply.tool_calls.iter().enumerate() {
        // The first fragment comes with the call's id and name, as servers send it.
        let (first, rest) = match halves(arguments).split_first() {
            Some((first, rest)) => (*first, rest.to_vec()),
            None => ("", Vec::new()),
        };
        body.push_str(&chunk(json!({"tool_calls": [{"index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": first}}]})));
        for piece in rest {
            body.push_str(&chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
            ));
        }
    }
    body.push_str(&format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason(&reply)}]})
    ));
    if let Some(usage) = &reply.usage {
        body.push_str(&format!("data: {}\n\n", json!({"choices": [], "usage": usage})));
    }
    body.push_str("data: [DONE]\n\n");
    event_stream(Body::from(body))
}

fn finish_reason(reply: &Reply) -> &str {
    match &reply.finish_reason {
        Some(reason) => reason,
        None if reply.tool_calls.is_empty() => "stop",
        None => "tool_calls",
    }
}

fn chunk(delta: Value) -> String {
    format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]}))
}

/// Why a strict server refuses a request `check` checks, and its answer, if it does.
fn refused(check: Check, request: &Value) -> Option<(String, Response)> {
    let messages = request["messages"].as_array()?;
    let calls = || {
        messages.iter().filter_map(|m| m["tool_calls"].as_array()).flatten().map(|call| {
            (
                call["id"].as_str().unwrap_or_default(),
                call["function"]["arguments"].as_str().unwrap_or_default(),
            )
        })
    };
    let message = match check {
        Check::SystemFirst => messages
            .iter()
            .skip(1)
            .any(|m| m["role"] == "system")
            .then(|| "System message must be at the beginning.".to_owned()),
        Check::ArgumentsParse => calls()
            .find(|(_, arguments)| serde_json::from_str::<Value>(arguments).is_err())
            .map(|(_, arguments)| format!("Failed to parse tool call arguments as JSON: {arguments}")),
        Check::MistralIds => {
            calls().find(|(id, _)| id.len() != 9 || !id.bytes().all(|b| b.is_ascii_alphanumeric())).map(
                |(id, _)| format!("Tool call IDs should be alphanumeric strings with length 9! (got `{id}`)"),
            )
        }
    }?;
    let body = json!({"error": {"code": 500, "message": message, "type": "server_error"}});
    Some((message, (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()))
}
