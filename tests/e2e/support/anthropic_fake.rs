//! A local Anthropic Messages endpoint for tests that behaves like the real one where the
//! host meets it: it checks each request as the API does (the key, the version header,
//! `max_tokens`, a top-level system prompt, alternating roles, every `tool_use` answered
//! in order; see `checks`) and refuses one it would refuse with an Anthropic-shaped 400;
//! it streams scripted replies as the API's events, `ping`s included, with usage from a
//! simulated prompt cache (see `cache`); it records every request with when it came; and
//! it misbehaves on cue (429 / 529 with `retry-after`, an `error` event mid-stream, a
//! connection dropped after some text). The server, the queue and the record are the shared
//! ones of `fake_endpoint`; this file is the Messages wire format.

mod cache;
mod checks;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub use cache::CacheUsage;
use cache::PromptCache;

use super::fake_endpoint::{self, Endpoint, Received, broken_after, event_stream, halves};

/// The variable the test configs name in `api_key_env`, and the key it holds.
pub const KEY_ENV: &str = "AGENT_HOST_TEST_ANTHROPIC_KEY";
pub const KEY: &str = "sk-ant-test-0123456789";

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct AnthropicReply {
    blocks: Vec<Block>,
    fault: Fault,
}

#[derive(Debug, Clone)]
enum Block {
    Text(String),
    Thinking(String),
    /// A tool call: its name and its input's JSON text.
    Tool(String, String),
}

#[derive(Debug, Clone)]
enum Fault {
    None,
    /// An error status with an Anthropic error body, and `retry-after` when given.
    Status {
        code: u16,
        message: String,
        retry_after: Option<u64>,
    },
    /// The reply's text, then an `error` event instead of the rest.
    ErrorEvent {
        kind: String,
        message: String,
    },
    /// The reply's text, then the connection drops.
    Drop,
}

impl AnthropicReply {
    /// A streamed text reply (`end_turn`).
    pub fn text(text: &str) -> Self {
        Self { blocks: vec![Block::Text(text.to_owned())], fault: Fault::None }
    }

    /// A streamed reply with one tool call (`tool_use`); `input` is its JSON text.
    pub fn tool(name: &str, input: &str) -> Self {
        Self { blocks: Vec::new(), fault: Fault::None }.and_tool(name, input)
    }

    /// Adds another tool call.
    pub fn and_tool(mut self, name: &str, input: &str) -> Self {
        self.blocks.push(Block::Tool(name.to_owned(), input.to_owned()));
        self
    }

    /// Starts the reply with a thinking block.
    pub fn thinking_first(mut self, thinking: &str) -> Self {
        self.blocks.insert(0, Block::Thinking(thinking.to_owned()));
        self
    }

    /// An error status; its error type is the one the API gives that status.
    pub fn status(code: u16) -> Self {
        Self::status_saying(code, &format!("scripted status {code}"))
    }

    /// An error status whose error says `message`.
    pub fn status_saying(code: u16, message: &str) -> Self {
        Self {
            blocks: Vec::new(),
            fault: Fault::Status { code, message: message.to_owned(), retry_after: None },
        }
    }

    /// Sends `retry-after: secs` with the error status.
    pub fn retry_after(mut self, secs: u64) -> Self {
        if let Fault::Status { retry_after, .. } = &mut self.fault {
            *retry_after = Some(secs);
        }
        self
    }

    /// Streams `text` (none when empty), then an `error` event of `kind`.
    pub fn error_event(text: &str, kind: &str, message: &str) -> Self {
        let blocks = if text.is_empty() { Vec::new() } else { vec![Block::Text(text.to_owned())] };
        Self { blocks, fault: Fault::ErrorEvent { kind: kind.to_owned(), message: message.to_owned() } }
    }

    /// Streams `text`, then drops the connection.
    pub fn drop_after(text: &str) -> Self {
        Self { blocks: vec![Block::Text(text.to_owned())], fault: Fault::Drop }
    }
}

#[derive(Default)]
struct Shared {
    endpoint: Endpoint<AnthropicReply>,
    cache: Mutex<PromptCache>,
    /// The prompt-cache usage reported to each request answered with a reply, in order.
    reported: Mutex<Vec<CacheUsage>>,
}

/// A running fake endpoint; stops when the test's runtime ends.
pub struct AnthropicFake {
    address: SocketAddr,
    shared: Arc<Shared>,
}

impl AnthropicFake {
    pub async fn start() -> Self {
        set_key();
        let shared = Arc::new(Shared::default());
        let address = fake_endpoint::serve("/v1/messages", shared.clone(), answer).await;
        Self { address, shared }
    }

    /// The base URL to configure: `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn push(&self, reply: AnthropicReply) -> &Self {
        self.shared.endpoint.push(reply);
        self
    }

    /// Every request received, in order.
    pub fn received(&self) -> Vec<Received> {
        self.shared.endpoint.received()
    }

    /// The prompt-cache usage the fake reported, one for each request it answered with a
    /// reply (not an error), in order.
    pub fn cache_reported(&self) -> Vec<CacheUsage> {
        self.shared.reported.lock().unwrap().clone()
    }

    /// Every request body received, parsed, in order; panics on one the API would refuse.
    pub fn requests(&self) -> Vec<Value> {
        self.received()
            .into_iter()
            .map(|received| match received.refused {
                Some(refusal) => panic!("the fake refused a request as the API would: {refusal}"),
                None => received.json,
            })
            .collect()
    }

    /// Config text for a deployment on this endpoint with the given `[[plugin]]` blocks.
    pub fn config(&self, plugins: &str) -> String {
        format!(
            "[agent]\nmax_iterations = 6\n\n[model]\nprovider = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-fake\"\n\
             api_key_env = \"{KEY_ENV}\"\nmax_retries = 2\nretry_backoff_ms = 10\ntimeout_secs = 5\n\n\
             [storage]\npath = \"sessions.db\"\n\n[runtime]\ncache_dir = \"{}\"\n\n{plugins}",
            self.url(),
            super::shared_cache_dir().display()
        )
    }
}

#[allow(unsafe_code)]
fn set_key() {
    static SET: Once = Once::new();
    // SAFETY: the variable is this module's alone, set once before any host reads it; the
    // standard library's lock orders it with every other read of the environment made
    // through `std::env`.
    SET.call_once(|| unsafe { std::env::set_var(KEY_ENV, KEY) });
}

async fn answer(shared: Arc<Shared>, mut received: Received) -> Response {
    let (api_key, version) = (received.header("x-api-key"), received.header("anthropic-version"));
    let checked = match (&api_key, &version) {
        (None, _) => {
            Err((StatusCode::UNAUTHORIZED, "authentication_error", "x-api-key header is required".to_owned()))
        }
        (Some(key), _) if key != KEY => {
            Err((StatusCode::UNAUTHORIZED, "authentication_error", "invalid x-api-key".to_owned()))
        }
        (_, None) => Err((
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "anthropic-version: header is required".to_owned(),
        )),
        _ => checks::check(&received.body)
            .map_err(|refusal| (StatusCode::BAD_REQUEST, "invalid_request_error", refusal)),
    };
    let request = match checked {
        Ok(request) => request,
        Err((status, kind, message)) => {
            received.refused = Some(message.clone());
            shared.endpoint.record(received);
            return error_response(status, kind, &message, None);
        }
    };
    shared.endpoint.record(received);
    let Some(reply) = shared.endpoint.next_reply() else {
        return error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "the fake has no reply queued",
            None,
        );
    };
    if let Fault::Status { code, message, retry_after } = &reply.fault {
        let status = StatusCode::from_u16(*code).unwrap();
        return error_response(status, error_kind(*code), message, *retry_after);
    }
    let usage = shared.cache.lock().unwrap().serve(&request);
    shared.reported.lock().unwrap().push(usage);
    let model = request["model"].as_str().unwrap_or_default();
    stream(events(&reply, model, usage), matches!(reply.fault, Fault::Drop))
}

/// The error type the API gives a status.
fn error_kind(code: u16) -> &'static str {
    match code {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

static REQUEST_IDS: AtomicU64 = AtomicU64::new(1);

fn error_response(status: StatusCode, kind: &str, message: &str, retry_after: Option<u64>) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}}).to_string();
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    let id = format!("req_fake_{}", REQUEST_IDS.fetch_add(1, Ordering::Relaxed));
    response.headers_mut().insert("request-id", id.parse().unwrap());
    if let Some(secs) = retry_after {
        response.headers_mut().insert(header::RETRY_AFTER, secs.into());
    }
    response
}

static TOOL_IDS: AtomicU64 = AtomicU64::new(1);

/// The reply as the API streams it: each event's data, in order.
fn events(reply: &AnthropicReply, model: &str, usage: CacheUsage) -> Vec<Value> {
    let mut events = vec![
        json!({"type": "message_start", "message": {
            "id": format!("msg_fake_{}", TOOL_IDS.load(Ordering::Relaxed)), "type": "message", "role": "assistant",
            "content": [], "model": model, "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": usage.input, "cache_read_input_tokens": usage.read,
                      "cache_creation_input_tokens": usage.written, "output_tokens": 1}}}),
        json!({"type": "ping"}),
    ];
    let mut output_tokens = 0;
    for (index, block) in reply.blocks.iter().enumerate() {
        let (start, deltas) = match block {
            Block::Text(text) => (
                json!({"type": "text", "text": ""}),
                halves(text)
                    .into_iter()
                    .map(|part| json!({"type": "text_delta", "text": part}))
                    .collect::<Vec<_>>(),
            ),
            Block::Thinking(thinking) => {
                let mut deltas: Vec<Value> = halves(thinking)
                    .into_iter()
                    .map(|part| json!({"type": "thinking_delta", "thinking": part}))
                    .collect();
                deltas.push(json!({"type": "signature_delta", "signature": "c2lnbmVk"}));
                (json!({"type": "thinking", "thinking": ""}), deltas)
            }
            Block::Tool(name, input) => {
                let id = format!("toolu_fake_{}", TOOL_IDS.fetch_add(1, Ordering::Relaxed));
                // As the API does: an empty fragment first, then the input in pieces.
                let mut deltas = vec![json!({"type": "input_json_delta", "partial_json": ""})];
                deltas.extend(
                    halves(input)
                        .into_iter()
                        .map(|part| json!({"type": "input_json_delta", "partial_json": part})),
                );
                (json!({"type": "tool_use", "id": id, "name": name, "input": {}}), deltas)
            }
        };
        output_tokens += match block {
            Block::Text(text) | Block::Thinking(text) | Block::Tool(_, text) => text.len().div_ceil(4) as u64,
        };
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        for (at, delta) in deltas.into_iter().enumerate() {
            if at == 1 {
                events.push(json!({"type": "ping"}));
            }
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    match &reply.fault {
        Fault::ErrorEvent { kind, message } => {
            events.push(json!({"type": "error", "error": {"type": kind, "message": message}}));
            return events;
        }
        Fault::Drop => return events,
        Fault::None | Fault::Status { .. } => {}
    }
    let calls = reply.blocks.iter().any(|block| matches!(block, Block::Tool(..)));
    let stop = if calls { "tool_use" } else { "end_turn" };
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": output_tokens}}));
    events.push(json!({"type": "message_stop"}));
    events
}

/// `events` as a `text/event-stream` body, one event per chunk; when `drop` is set the
/// connection breaks after the last one.
fn stream(events: Vec<Value>, drop: bool) -> Response {
    let chunks: Vec<String> = events
        .into_iter()
        .map(|event| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap_or_default()))
        .collect();
    if drop {
        return event_stream(broken_after(chunks));
    }
    let chunks = chunks.into_iter().map(Ok::<_, std::io::Error>);
    event_stream(Body::from_stream(futures_util::stream::iter(chunks)))
}
