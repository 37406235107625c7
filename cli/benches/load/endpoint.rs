//! A fake model endpoint that answers at once, scripting the todo workflow: add four
//! todos, complete them one by one, then a final answer. It speaks both wires the host
//! does: Chat Completions (`/v1/chat/completions`, whole JSON replies) and Anthropic
//! Messages (`/v1/messages`, streamed events), so host overhead per model call can be
//! measured through either client.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use agent_host::model::http::{self, HttpClient};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use memchr::memmem;
use serde_json::{Value, json};

/// Model calls in one session: one `todos_add`, four `todos_complete`, the final answer.
pub const MODEL_CALLS_PER_SESSION: u64 = 6;
/// Tool calls in one session.
pub const TOOL_CALLS_PER_SESSION: u64 = 5;
const TODOS: u64 = 4;
/// The name of the endpoint's thread, so its CPU time can be told from the host's.
pub const THREAD: &str = "fake-model";

#[derive(Default)]
pub struct Counters {
    pub requests: AtomicU64,
    /// Workflows started: numbers each one's todo titles.
    workflows: AtomicU64,
}

/// Which wire a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    ChatCompletions,
    Messages,
}

impl Wire {
    /// The `[model] provider` whose client speaks it.
    pub fn provider(self) -> &'static str {
        match self {
            Wire::ChatCompletions => "openai",
            Wire::Messages => "anthropic",
        }
    }
}

/// Serves the todo workflow; see [`serve`].
pub fn start(counters: Arc<Counters>) -> String {
    serve(
        axum::Router::new()
            .route("/v1/chat/completions", post(reply))
            .route("/v1/messages", post(reply_messages))
            .with_state(counters),
    )
}

/// Serves `app` on a loopback port from its own thread and runtime, so the host's runtime
/// only ever does the host's work. Returns the `/v1` base URL (both clients take it).
pub fn serve(app: axum::Router) -> String {
    let listener = std::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).expect("bind loopback");
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::Builder::new()
        .name(THREAD.into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        })
        .unwrap();
    format!("http://{address}/v1")
}

/// Bare round trips to the endpoint, one at a time, through the same HTTP client the host
/// uses and with no host work in between: the floor under every model call of the bench.
pub async fn round_trips(base_url: &str, wire: Wire, count: usize) -> Vec<std::time::Duration> {
    let bare = BareRequest::new(base_url, wire);
    let mut times = Vec::with_capacity(count);
    for _ in 0..count {
        let started = std::time::Instant::now();
        bare.round_trip().await;
        times.push(started.elapsed());
    }
    times.sort_unstable();
    times
}

/// Bare round trips at `concurrency`: `count` in all through one shared HTTP client, as the
/// host sends them, with no host work in between. Returns model calls per second: the ceiling
/// the endpoint and loopback TCP alone put on any host at that concurrency on this machine.
pub async fn round_trips_per_second(base_url: &str, wire: Wire, count: usize, concurrency: usize) -> f64 {
    let bare = Arc::new(BareRequest::new(base_url, wire));
    let next = Arc::new(AtomicU64::new(0));
    let started = std::time::Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (bare, next) = (bare.clone(), next.clone());
            tokio::spawn(async move {
                while next.fetch_add(1, Ordering::Relaxed) < count as u64 {
                    bare.round_trip().await;
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("a round-trip worker panicked");
    }
    count as f64 / started.elapsed().as_secs_f64()
}

/// What a bare round trip sends: a minimal request of the wire to the endpoint, through a
/// client like the host's.
struct BareRequest {
    uri: Uri,
    client: HttpClient,
    body: Bytes,
}

impl BareRequest {
    fn new(base_url: &str, wire: Wire) -> Self {
        let (path, body): (_, &'static [u8]) = match wire {
            Wire::ChatCompletions => {
                ("chat/completions", br#"{"model":"fake","stream":true,"messages":[{"role":"user","content":"hi"}]}"#)
            }
            Wire::Messages => (
                "messages",
                br#"{"model":"fake","max_tokens":8192,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#,
            ),
        };
        let uri: Uri = format!("{base_url}/{path}").parse().expect("the endpoint URL parses");
        let client = HttpClient::new(&uri, std::time::Duration::from_secs(10));
        Self { uri, client, body: Bytes::from_static(body) }
    }

    /// Sends the request and reads the whole reply.
    async fn round_trip(&self) {
        let response = self
            .client
            .post_json(&self.uri, &Default::default(), self.body.clone())
            .await
            .expect("the fake endpoint answers");
        http::read_body(response, usize::MAX).await.expect("the fake endpoint sends a body");
    }
}

/// The next step of the workflow, from how many tool results the body holds (a bench session
/// is one turn, so every one is this turn's). The
/// roles are found by searching the body's bytes, not by parsing it: the host writes compact
/// JSON, where a `"role":"tool"` can only be a role (inside a string its quotes would be
/// escaped). A JSON parse of every request was a sixth of the endpoint's CPU in the profile, and the
/// endpoint's time is on the critical path of every model call the bench makes.
async fn reply(State(counters): State<Arc<Counters>>, body: Bytes) -> Response {
    counters.requests.fetch_add(1, Ordering::Relaxed);
    let Some(step) = tool_results(&body) else {
        return (StatusCode::BAD_REQUEST, "not a chat completions request").into_response();
    };
    let answer = numbered(&counters, &answers()[step.min(TODOS as usize + 1)], step);
    ([(header::CONTENT_TYPE, "application/json")], answer).into_response()
}

/// The same steps on the Messages wire, streamed as the API streams them. Every tool result
/// of the body is this turn's: a bench session is one turn.
async fn reply_messages(State(counters): State<Arc<Counters>>, body: Bytes) -> Response {
    counters.requests.fetch_add(1, Ordering::Relaxed);
    let is_object = body.first() == Some(&b'{') && body.last() == Some(&b'}');
    if !is_object || memmem::find(&body, b"\"messages\":[").is_none() {
        return (StatusCode::BAD_REQUEST, "not a Messages request").into_response();
    }
    let step = memmem::find_iter(&body, b"\"type\":\"tool_result\"").count();
    let answer = numbered(&counters, &message_answers()[step.min(TODOS as usize + 1)], step);
    ([(header::CONTENT_TYPE, "text/event-stream")], answer).into_response()
}

/// `answer`, with the workflow's number in the titles of the first step's todos.
fn numbered(counters: &Counters, answer: &Bytes, step: usize) -> Bytes {
    if step != 0 {
        return answer.clone();
    }
    // Each workflow's todos get titles of their own, so no two sessions ever hold the same
    // list: the host shares reusable contributions across sessions with equal state, and
    // identical lists in every session would flatter it.
    let workflow = counters.workflows.fetch_add(1, Ordering::Relaxed).to_string();
    Bytes::from(String::from_utf8_lossy(answer).replace(WORKFLOW, &workflow))
}

/// Tool results in the body; `None` for a body that is not a JSON object with messages. Not
/// "after the last user message": the stock deployment's injected messages (the todo list,
/// the mode) are sent as user messages after the history.
fn tool_results(body: &[u8]) -> Option<usize> {
    let is_object = body.first() == Some(&b'{') && body.last() == Some(&b'}');
    if !is_object || memmem::find(body, b"\"messages\":[").is_none() {
        return None;
    }
    Some(memmem::find_iter(body, b"\"role\":\"tool\"").count())
}

/// Stands for the workflow's number in the titles of the first answer.
const WORKFLOW: &str = "#workflow#";

/// The tool call of each step but the last: `todos_add`, then four `todos_complete`.
fn step_call(step: u64) -> Option<(&'static str, Value)> {
    match step {
        0 => Some((
            "todos_add",
            json!({ "todos": (1..=TODOS).map(|n| json!({ "title": format!("step {n} of {WORKFLOW}") })).collect::<Vec<_>>() }),
        )),
        n if n <= TODOS => Some(("todos_complete", json!({ "items": [{ "id": n, "reason": "done" }] }))),
        _ => None,
    }
}

const FINAL_ANSWER: &str = "All four steps are done.";

/// The whole response body for each step: `todos_add`, four `todos_complete`, the answer.
fn answers() -> &'static [Bytes] {
    static ANSWERS: OnceLock<Vec<Bytes>> = OnceLock::new();
    ANSWERS.get_or_init(|| {
        (0..=TODOS + 1)
            .map(|step| {
                let message = match step_call(step) {
                    Some((name, arguments)) => tool_call(name, arguments, step),
                    None => json!({ "role": "assistant", "content": FINAL_ANSWER }),
                };
                let body = json!({
                    "id": "bench",
                    "object": "chat.completion",
                    "choices": [{ "index": 0, "message": message, "finish_reason": "stop" }],
                });
                Bytes::from(body.to_string())
            })
            .collect()
    })
}

fn tool_call(name: &str, arguments: Value, step: u64) -> Value {
    json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{
            "id": format!("call_{step}"),
            "type": "function",
            "function": { "name": name, "arguments": arguments.to_string() },
        }],
    })
}

/// The streamed body for each step on the Messages wire: the events the API sends for a
/// tool call (its input in two fragments) or for the final text, pings included.
fn message_answers() -> &'static [Bytes] {
    static ANSWERS: OnceLock<Vec<Bytes>> = OnceLock::new();
    ANSWERS.get_or_init(|| {
        (0..=TODOS + 1)
            .map(|step| {
                let (block, deltas, stop) = match step_call(step) {
                    Some((name, input)) => {
                        let input = input.to_string();
                        // Cut before the first workflow number, so each stays whole for `numbered`.
                        let (first, second) = input.split_at(input.find(WORKFLOW).unwrap_or(input.len() / 2));
                        let block = json!({"type": "tool_use", "id": format!("toolu_{step}"), "name": name, "input": {}});
                        let deltas = [first, second].map(|part| json!({"type": "input_json_delta", "partial_json": part}));
                        (block, deltas.to_vec(), "tool_use")
                    }
                    None => {
                        let (first, second) = FINAL_ANSWER.split_at(FINAL_ANSWER.len() / 2);
                        let deltas = [first, second].map(|part| json!({"type": "text_delta", "text": part}));
                        (json!({"type": "text", "text": ""}), deltas.to_vec(), "end_turn")
                    }
                };
                let mut events = vec![
                    json!({"type": "message_start", "message": {"id": "msg_bench", "type": "message", "role": "assistant",
                        "content": [], "model": "fake", "stop_reason": null,
                        "usage": {"input_tokens": 900, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 100, "output_tokens": 1}}}),
                    json!({"type": "content_block_start", "index": 0, "content_block": block}),
                    json!({"type": "ping"}),
                ];
                events.extend(deltas.into_iter().map(|delta| json!({"type": "content_block_delta", "index": 0, "delta": delta})));
                events.push(json!({"type": "content_block_stop", "index": 0}));
                events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 40}}));
                events.push(json!({"type": "message_stop"}));
                let body: String = events
                    .iter()
                    .map(|event| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap()))
                    .collect();
                Bytes::from(body)
            })
            .collect()
    })
}
