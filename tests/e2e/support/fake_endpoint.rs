//! What the fake model endpoints share, whatever wire format they speak: a server on
//! loopback, the queue of scripted replies, the record of every request as it arrived, and
//! the faults of the connection itself (a body broken off after what was sent). Each fake
//! (`fake_model.rs`, `anthropic_fake.rs`) keeps only its wire format: what a reply, an error
//! and a refused request look like.

use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::Response;
use axum::routing::post;
use serde_json::Value;

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    /// The body's bytes, as sent.
    pub body: String,
    /// The body parsed (`Null` when it is not JSON).
    pub json: Value,
    pub at: Instant,
    /// Why the fake refused it as the real server would, if it did.
    pub refused: Option<String>,
}

impl Received {
    fn arrived(headers: HeaderMap, body: &[u8]) -> Self {
        let body = String::from_utf8_lossy(body).into_owned();
        let json = serde_json::from_str(&body).unwrap_or(Value::Null);
        Self { headers, body, json, at: Instant::now(), refused: None }
    }

    /// The header `name`, when it was sent as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_owned)
    }
}

/// One fake's script and record; `R` is its own kind of scripted reply.
pub struct Endpoint<R> {
    replies: Mutex<VecDeque<R>>,
    /// Answers when the queue is empty (load tests).
    fallback: Mutex<Option<R>>,
    received: Mutex<Vec<Received>>,
}

impl<R> Default for Endpoint<R> {
    fn default() -> Self {
        Self { replies: Mutex::default(), fallback: Mutex::default(), received: Mutex::default() }
    }
}

impl<R: Clone> Endpoint<R> {
    pub fn push(&self, reply: R) {
        self.replies.lock().unwrap().push_back(reply);
    }

    /// The reply given whenever the queue is empty.
    pub fn fallback(&self, reply: R) {
        *self.fallback.lock().unwrap() = Some(reply);
    }

    /// The next scripted reply: the first queued, else the fallback, else none.
    pub fn next_reply(&self) -> Option<R> {
        let queued = self.replies.lock().unwrap().pop_front();
        queued.or_else(|| self.fallback.lock().unwrap().clone())
    }

    pub fn record(&self, request: Received) {
        self.received.lock().unwrap().push(request);
    }

    /// Every request recorded, in order.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

/// Serves POSTs to `path` on a loopback port until the test's runtime ends: each request
/// goes to `answer` with the fake's `state`, as it arrived. Returns the server's address.
pub async fn serve<S, F, Fut>(path: &str, state: Arc<S>, answer: F) -> SocketAddr
where
    S: Send + Sync + 'static,
    F: Fn(Arc<S>, Received) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    let handler = move |State(state): State<Arc<S>>, headers: HeaderMap, body: Bytes| {
        answer(state, Received::arrived(headers, &body))
    };
    let app = axum::Router::new().route(path, post(handler)).with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    address
}

/// `body` as a `text/event-stream` response with status 200.
pub fn event_stream(body: Body) -> Response {
    Response::builder().header(header::CONTENT_TYPE, "text/event-stream").body(body).unwrap()
}

/// A body that sends `chunks`, then breaks the connection.
pub fn broken_after(chunks: Vec<String>) -> Body {
    let sent = futures_util::stream::iter(chunks.into_iter().map(|chunk| Ok(Bytes::from(chunk))));
    let broken = futures_util::stream::once(async {
        // After a pause, so the server writes out what came before the break.
        tokio::time::sleep(Duration::from_millis(50)).await;
        Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "the fake drops the connection"))
    });
    Body::from_stream(futures_util::StreamExt::chain(sent, broken))
}

/// `text` in two pieces cut at the middle character, the way a reply streams in deltas; the
/// empty ones left out.
pub fn halves(text: &str) -> Vec<&str> {
    let middle = text.char_indices().nth(text.chars().count() / 2).map_or(text.len(), |(at, _)| at);
    [&text[..middle], &text[middle..]].into_iter().filter(|part| !part.is_empty()).collect()
}
