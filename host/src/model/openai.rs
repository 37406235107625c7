//! OpenAI-compatible Chat Completions over HTTP: streaming (SSE) or whole replies,
//! retries with backoff on 429 / 5xx / dropped connections, errors that never show the key
//! (not even when the endpoint echoes it back).

use std::time::Duration;

use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, LOCATION, RETRY_AFTER};
use hyper::{Response, StatusCode, Uri};
use tokio::time::{Instant, timeout_at};

use super::encodings::Encodings;
use super::error::{redact, redact_url};
use super::http::{self, HttpClient};
use super::{HistoryEncodings, ModelError, ModelReply, ModelRequest, ReplyAssembler, wire};
use crate::config::{Limits, ModelConfig};

/// Longest wait a `Retry-After` header may impose.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
/// Longest wait for a connection to the endpoint.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct OpenAiClient {
    http: HttpClient,
    /// Parsed once: a request reuses it rather than parsing the text again.
    url: Uri,
    model: String,
    api_key: Option<String>,
    /// `Authorization` for `api_key` and `[model] headers`, built once.
    headers: HeaderMap,
    /// System prompts and tool lists already encoded for a request.
    encodings: Encodings,
    key_env: String,
    /// For one attempt, from sending the request to the reply's last byte.
    timeout: Duration,
    max_retries: u32,
    backoff: Duration,
    temperature: Option<f32>,
    /// A response body's cap (`endpoint_body_mb`), streamed or whole.
    max_body_bytes: usize,
    /// One streamed event's cap (`sse_line_kb`).
    max_event_bytes: usize,
}

impl OpenAiClient {
    /// The client for `[model]`, or `None` when no endpoint is configured anywhere.
    /// `base_url` falls back to `OPENAI_BASE_URL`; with neither, a key alone means the
    /// official endpoint, and no key means no endpoint.
    /// The endpoint caps come from `limits` (`[runtime.limits]`).
    pub fn from_config(config: &ModelConfig, limits: &Limits) -> anyhow::Result<Option<Self>> {
        let api_key = std::env::var(config.key_env()).ok().filter(|key| !key.trim().is_empty());
        let base_url = config
            .base_url
            .clone()
            .or_else(|| std::env::var("OPENAI_BASE_URL").ok().filter(|url| !url.trim().is_empty()));
        let base_url = match (base_url, &api_key) {
            (Some(url), _) => url,
            (None, Some(_)) => "https://api.openai.com/v1".to_owned(),
            (None, None) => return Ok(None),
        };
        let url = format!("{}/chat/completions", base_url.trim_end_matches('/'));
        let url = parse_endpoint(&url)?;
        let mut headers = http::configured_headers(&config.headers)?;
        if let Some(key) = &api_key {
            let authorization = http::bearer(key).ok_or_else(|| {
                anyhow::anyhow!(
                    "the API key in {} has characters an HTTP header cannot carry (a line break?)",
                    config.key_env()
                )
            })?;
            headers.insert(AUTHORIZATION, authorization);
        }
        Ok(Some(Self {
            http: HttpClient::new(&url, CONNECT_TIMEOUT),
            url,
            model: config.model.clone(),
            api_key,
            headers,
            encodings: Encodings::default(),
            key_env: config.key_env().to_owned(),
            timeout: Duration::from_secs(config.timeout_secs),
            max_retries: config.max_retries,
            backoff: Duration::from_millis(config.retry_backoff_ms),
            temperature: config.temperature,
            max_body_bytes: limits.endpoint_body_mb as usize * 1024 * 1024,
            max_event_bytes: limits.sse_line_kb as usize * 1024,
        }))
    }

    pub fn describe(&self) -> String {
        match self.http.proxy() {
            Some(proxy) => {
                format!("{} at {} (through the proxy {})", self.model, self.shown_url(), shown(proxy))
            }
            None => format!("{} at {}", self.model, self.shown_url()),
        }
    }

    pub async fn complete(
        &self,
        request: &ModelRequest<'_>,
        history: &mut HistoryEncodings,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, ModelError> {
        let body = wire::request_body(&self.model, self.temperature, request, &self.encodings, history);
        let body = bytes::Bytes::from(body);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let deadline = Instant::now() + self.timeout;
            let sent = timeout_at(deadline, self.send(&body)).await.map_err(|_| self.timed_out())?;
            let retry_after = match sent {
                Ok(response) => {
                    let read = timeout_at(deadline, self.read(response, on_text)).await;
                    return read.map_err(|_| self.timed_out())?.map_err(|e| self.redact(e));
                }
                Err(Failure::Retryable { error, retry_after }) if attempt <= self.max_retries => {
                    tracing::warn!(%error, attempt, "model call failed; retrying");
                    retry_after
                }
                Err(Failure::Retryable { error, .. } | Failure::Final(error)) => {
                    return Err(match error {
                        ModelError::Http { status, body, .. } => {
                            ModelError::Http { status, attempts: attempt, body }
                        }
                        other => other,
                    });
                }
            };
            let backoff = self.backoff * 2u32.saturating_pow(attempt - 1);
            tokio::time::sleep(retry_after.unwrap_or(backoff).min(MAX_RETRY_AFTER)).await;
        }
    }

    async fn send(&self, body: &bytes::Bytes) -> Result<Response<http::Body>, Failure> {
        let response = self
            .http
            .post_json(&self.url, &self.headers, body.clone())
            .await
            .map_err(|error| self.transport_error(&error))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(Failure::Final(ModelError::Unauthorized {
                status: status.as_u16(),
                key_env: self.key_env.clone(),
            }));
        }
        if status.is_redirection() {
            // Not followed: a POST that moved is a `base_url` to correct, not to chase.
            let location = response.headers().get(LOCATION).and_then(|value| value.to_str().ok());
            let body = match location {
                Some(location) => {
                    let location = redact_url(location);
                    format!("the endpoint redirects to {location}; set `[model] base_url` to it")
                }
                None => "the endpoint redirects without saying where".to_owned(),
            };
            return Err(Failure::Final(ModelError::Http { status: status.as_u16(), attempts: 1, body }));
        }
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = http::read_body(response, self.max_body_bytes).await.unwrap_or_default();
        let text = String::from_utf8_lossy(&body);
        // Redacted before it is cut, so no part of an echoed key survives at the cut.
        let text = match &self.api_key {
            Some(key) => redact(&text, key),
            None => text.into_owned(),
        };
        let error = ModelError::Http { status: status.as_u16(), attempts: 1, body: short(&text) };
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            Err(Failure::Retryable { error, retry_after })
        } else {
            Err(Failure::Final(error))
        }
    }

    async fn read(
        &self,
        response: Response<http::Body>,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, ModelError> {
        let streamed = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        if !streamed {
            let body = http::read_body(response, self.max_body_bytes)
                .await
                .map_err(|error| self.body_error(&*error))?;
            let reply = ReplyAssembler::from_response(&body)?;
            if !reply.text.is_empty() {
                on_text(&reply.text);
            }
            return Ok(reply);
        }
        let chunks = http::body_stream(response, self.max_body_bytes);
        let transport = |error: http::BodyError| self.body_error(&*error);
        super::read_event_stream(chunks, self.max_event_bytes, transport, on_text).await
    }

    /// `error` without the API key, whatever the endpoint echoed back.
    fn redact(&self, error: ModelError) -> ModelError {
        match &self.api_key {
            Some(key) => error.redact(key),
            None => error,
        }
    }

    fn transport_error(&self, error: &http::TransportError) -> Failure {
        let detail = match self.http.proxy() {
            Some(proxy) => format!("through the proxy {}: {}", shown(proxy), root_cause(error)),
            None => root_cause(error),
        };
        Failure::Retryable {
            error: ModelError::Unreachable { url: self.shown_url(), detail },
            retry_after: None,
        }
    }

    /// The endpoint's URL as it may be printed: see [`redact_url`].
    fn shown_url(&self) -> String {
        redact_url(&self.url.to_string())
    }

    fn body_error(&self, error: &(dyn std::error::Error + 'static)) -> ModelError {
        if http::over_cap(error) {
            let cap = self.max_body_bytes >> 20;
            return ModelError::Stream {
                detail: format!(
                    "the reply is longer than {cap} MiB, the cap `endpoint_body_mb` in [runtime.limits]"
                ),
            };
        }
        ModelError::Stream { detail: root_cause(error) }
    }

    fn timed_out(&self) -> ModelError {
        ModelError::Timeout { secs: self.timeout.as_secs() }
    }
}

/// A proxy's address without any credentials it carries: scheme, host and port.
fn shown(proxy: &Uri) -> String {
    let host = proxy.host().unwrap_or("?");
    match proxy.port_u16() {
        Some(port) => format!("{}://{host}:{port}", proxy.scheme_str().unwrap_or("http")),
        None => format!("{}://{host}", proxy.scheme_str().unwrap_or("http")),
    }
}

/// The endpoint's URL, checked once: http or https, with a host.
fn parse_endpoint(url: &str) -> anyhow::Result<Uri> {
    let not_a_url = |detail: String| {
        let url = redact_url(url);
        anyhow::anyhow!(
            "the model endpoint `{url}` (`[model] base_url` or OPENAI_BASE_URL) is not a URL: {detail}"
        )
    };
    let uri: Uri = url.parse().map_err(|error: hyper::http::uri::InvalidUri| not_a_url(error.to_string()))?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http" | "https"), Some(_)) => Ok(uri),
        (Some(other), Some(_)) => Err(not_a_url(format!("the scheme must be http or https, not `{other}`"))),
        _ => Err(not_a_url("it needs a scheme and a host, like https://api.example.com/v1".into())),
    }
}

enum Failure {
    Retryable { error: ModelError, retry_after: Option<Duration> },
    Final(ModelError),
}

/// The innermost error's text: "connection refused", not the client's whole chain.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

fn short(text: &str) -> String {
    let text = text.trim();
    let mut end = text.len().min(300);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}
