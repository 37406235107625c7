//! Anthropic's Messages API over HTTP: streamed replies, prompt caching, retries with
//! backoff on 429 / 5xx / 529 / `overloaded_error` (honouring `retry-after`), a first-byte
//! and an idle timeout, and errors that never show the key (not even when the endpoint
//! echoes it back).

mod events;
mod stream;
mod turns;
mod whole;
mod wire;

use std::time::Duration;

use bytes::Bytes;
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION};
use hyper::{Response, StatusCode, Uri};
use tokio::time::timeout_at;

use self::stream::{Cause, Interrupted};
use super::deadline::{self, Clock, Lapse, Timed, Waits};
use super::encodings::Encodings;
use super::error::{redact, redact_url, redirect_text};
use super::http::{self, HttpClient};
use super::retry::{Failure, RetryPolicy, root_cause};
use super::sse::ENDED_EARLY;
use super::{HistoryEncodings, ModelError, ModelReply, ModelRequest};
use crate::config::ModelConfig;

/// The endpoint when `[model] base_url` names none.
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version the requests and the stream are written for.
const API_VERSION: &str = "2023-06-01";
/// `max_tokens` when `[model] max_output_tokens` is not set: Messages requires one.
const DEFAULT_MAX_TOKENS: u32 = crate::config::ANTHROPIC_MAX_TOKENS;
/// Longest wait for a connection to the endpoint.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of an error body an error shows.
const MAX_ERROR_BYTES: usize = 2000;
/// Error kinds of an `error` event that another attempt may not meet, when nothing of the
/// reply had been shown yet: the endpoint is busy, or failed on its side.
const RETRYABLE_ERRORS: [&str; 2] = ["overloaded_error", "api_error"];

const API_KEY: HeaderName = HeaderName::from_static("x-api-key");
const VERSION: HeaderName = HeaderName::from_static("anthropic-version");
const REQUEST_ID: HeaderName = HeaderName::from_static("request-id");

pub struct AnthropicClient {
    http: HttpClient,
    /// Parsed once: a request reuses it rather than parsing the text again.
    url: Uri,
    settings: wire::Settings,
    api_key: Option<String>,
    /// `x-api-key`, `anthropic-version` and `[model] headers`, built once.
    headers: HeaderMap,
    /// System prompts and tool lists already encoded for a request.
    encodings: Encodings,
    key_env: String,
    waits: Waits,
    retries: RetryPolicy,
    /// A response body's cap (`[model] endpoint_body_mb`), streamed or whole.
    max_body_bytes: usize,
    /// One streamed event's cap (`[model] sse_line_kb`).
    max_event_bytes: usize,
}

impl AnthropicClient {
    /// The client for `[model]`. The key is read from `api_key_env` (`ANTHROPIC_API_KEY`
    /// by default); without one, only a `base_url` of its own (a gateway that adds the key)
    /// is called.
    pub fn from_config(config: &ModelConfig) -> anyhow::Result<Self> {
        let extra = extra_body(&config.extra_body)?;
        let api_key = std::env::var(config.key_env()).ok().filter(|key| !key.trim().is_empty());
        if api_key.is_none() && config.base_url.is_none() {
            anyhow::bail!(
                "`[model] provider = \"anthropic\"` needs an API key: set {} (or name another variable in `[model] api_key_env`)",
                config.key_env()
            );
        }
        let url = messages_url(config.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL))?;
        let mut headers = http::configured_headers(&config.headers)?;
        if let Some(key) = &api_key {
            headers.insert(API_KEY, http::key_header(http::secret(key), config.key_env())?);
        }
        // A version of `[model] headers` wins: a deployment may need a newer one.
        headers.entry(VERSION).or_insert(HeaderValue::from_static(API_VERSION));
        Ok(Self {
            http: HttpClient::new(&url, CONNECT_TIMEOUT),
            url,
            settings: wire::Settings {
                model: config.model.clone(),
                max_tokens: config.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
                temperature: config.temperature,
                extra,
            },
            api_key,
            headers,
            encodings: Encodings::default(),
            key_env: config.key_env().to_owned(),
            waits: Waits::from_config(config),
            retries: RetryPolicy::from_config(config),
            max_body_bytes: config.max_body_bytes(),
            max_event_bytes: config.max_event_bytes(),
        })
    }

    pub fn describe(&self) -> String {
        let url = redact_url(&self.url.to_string());
        match self.http.proxy() {
            Some(proxy) => {
                format!("{} at {url} (through the proxy {})", self.settings.model, http::shown_proxy(proxy))
            }
            None => format!("{} at {url}", self.settings.model),
        }
    }

    pub async fn complete(
        &self,
        request: &ModelRequest<'_>,
        history: &mut HistoryEncodings,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, ModelError> {
        let body = Bytes::from(wire::request_body(&self.settings, request, &self.encodings, history));
        let mut number = 0;
        loop {
            number += 1;
            let failure = match self.attempt(&body, on_text).await {
                Ok(reply) => return Ok(reply),
                Err(failure) => failure,
            };
            match self.retries.after(number, failure) {
                Ok(wait) => tokio::time::sleep(wait).await,
                Err(error) => {
                    return Err(match &self.api_key {
                        Some(key) => error.redact(key),
                        None => error,
                    });
                }
            }
        }
    }

    /// One attempt, from sending the request to the reply's last byte.
    async fn attempt(
        &self,
        body: &Bytes,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, Failure> {
        let clock = Clock::start(self.waits);
        let (first_byte, lapse) = clock.next();
        let sent = timeout_at(first_byte, self.http.post_json(&self.url, &self.headers, body.clone())).await;
        let response = match sent {
            Err(_) => return Err(Failure::Final(timed_out(lapse))),
            Ok(Err(error)) => return Err(self.transport_error(&error)),
            Ok(Ok(response)) => response,
        };
        if !response.status().is_success() {
            return Err(self.refusal(response, &clock).await);
        }
        let streamed = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        if !streamed {
            return self.read_whole(response, &clock, on_text).await;
        }
        let chunks = deadline::timed(http::body_stream(response, self.max_body_bytes), clock);
        stream::read(chunks, self.max_event_bytes, on_text).await.map_err(|broken| self.interrupted(broken))
    }

    /// A reply sent as one JSON body.
    async fn read_whole(
        &self,
        response: Response<http::Body>,
        clock: &Clock,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, Failure> {
        let (end, lapse) = clock.end();
        let body = match timeout_at(end, http::read_body(response, self.max_body_bytes)).await {
            Err(_) => return Err(Failure::Final(timed_out(lapse))),
            Ok(Err(error)) => {
                return Err(Failure::Final(ModelError::Stream { detail: self.body_error(&*error) }));
            }
            Ok(Ok(body)) => body,
        };
        let reply = whole::whole(&body).map_err(|detail| Failure::Final(ModelError::Stream { detail }))?;
        if !reply.text.is_empty() {
            on_text(&reply.text);
        }
        Ok(reply)
    }

    /// What a stream that broke off becomes: a cut reply once text was shown (kept, never
    /// sent again), else another attempt where one may succeed.
    fn interrupted(&self, Interrupted { cause, partial }: Interrupted<Timed<http::BodyError>>) -> Failure {
        let detail = match &cause {
            Cause::Transport(Timed::Lapsed(lapse)) => lapse.error().into_cut_detail(),
            Cause::Transport(Timed::Transport(error)) => self.body_error(&**error),
            Cause::Unreadable(detail) => detail.clone(),
            Cause::Endpoint { kind, message } => {
                format!("the endpoint sent an error mid-reply: {kind}: {message}")
            }
            Cause::Ended => ENDED_EARLY.to_owned(),
        };
        if !partial.text.is_empty() {
            return Failure::Final(ModelError::Cut { detail, partial: Box::new(partial) });
        }
        let retryable = match &cause {
            Cause::Endpoint { kind, .. } => RETRYABLE_ERRORS.contains(&kind.as_str()),
            Cause::Transport(Timed::Transport(error)) => !http::over_cap(&**error),
            Cause::Ended => true,
            Cause::Transport(Timed::Lapsed(lapse)) => return Failure::Final(timed_out(*lapse)),
            Cause::Unreadable(_) => false,
        };
        let error = ModelError::Stream { detail };
        if retryable { Failure::Retryable { error, retry_after: None } } else { Failure::Final(error) }
    }

    /// What an answer other than 2xx becomes.
    async fn refusal(&self, response: Response<http::Body>, clock: &Clock) -> Failure {
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Failure::Final(ModelError::Unauthorized {
                status: status.as_u16(),
                key_env: self.key_env.clone(),
            });
        }
        if status.is_redirection() {
            // Not followed: a POST that moved is a `base_url` to correct, not to chase.
            let location = response.headers().get(LOCATION).and_then(|value| value.to_str().ok());
            let body = redirect_text(location);
            return Failure::Final(ModelError::Http { status: status.as_u16(), attempts: 1, body });
        }
        let retry_after = super::retry::retry_after(response.headers());
        let request_id =
            response.headers().get(REQUEST_ID).and_then(|id| id.to_str().ok()).map(str::to_owned);
        let body = timeout_at(clock.end().0, http::read_body(response, self.max_body_bytes)).await;
        let body = body.ok().and_then(Result::ok).unwrap_or_default();
        let mut text = self.error_text(&body);
        if status == StatusCode::BAD_REQUEST && too_long(&text) {
            return Failure::Final(ModelError::ContextTooLong { status: status.as_u16(), body: text });
        }
        if let Some(id) = request_id {
            text.push_str(&format!(" (request-id {id})"));
        }
        let error = ModelError::Http { status: status.as_u16(), attempts: 1, body: text };
        // 529 is Anthropic's "overloaded": a server error like the others.
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            Failure::Retryable { error, retry_after }
        } else {
            Failure::Final(error)
        }
    }

    /// An error body as a line: `kind: message` from a Messages error, else the text; the
    /// key taken out before it is cut, so no part of an echoed key survives at the cut.
    fn error_text(&self, body: &[u8]) -> String {
        #[derive(serde::Deserialize)]
        struct Body {
            error: events::EndpointError,
        }
        let text = match serde_json::from_slice::<Body>(body) {
            Ok(Body { error }) => format!("{}: {}", error.kind, error.message),
            Err(_) => String::from_utf8_lossy(body).trim().to_owned(),
        };
        let text = match &self.api_key {
            Some(key) => redact(&text, key),
            None => text,
        };
        let mut end = text.len().min(MAX_ERROR_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text[..end].to_owned()
    }

    fn transport_error(&self, error: &http::TransportError) -> Failure {
        let detail = match self.http.proxy() {
            Some(proxy) => format!("through the proxy {}: {}", http::shown_proxy(proxy), root_cause(error)),
            None => root_cause(error),
        };
        let url = redact_url(&self.url.to_string());
        Failure::Retryable { error: ModelError::Unreachable { url, detail }, retry_after: None }
    }

    fn body_error(&self, error: &(dyn std::error::Error + 'static)) -> String {
        http::body_error_text(error, self.max_body_bytes)
    }
}

/// The error for an attempt a wait ended before any of the reply was shown.
fn timed_out(lapse: Lapse) -> ModelError {
    tracing::warn!(
        secs = lapse.wait().as_secs(),
        setting = lapse.setting(),
        "the model endpoint was too slow"
    );
    lapse.error()
}

/// Whether a 400's error says the prompt does not fit the model's context window.
fn too_long(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    error.contains("prompt is too long") || error.contains("exceed context limit")
}

/// `[model] extra_body` as JSON, refused where it would replace what the client sends or
/// ask for what the host cannot give back yet.
fn extra_body(table: &toml::Table) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    if table.contains_key("thinking") {
        anyhow::bail!(
            "`[model] extra_body.thinking` is not supported with provider = \"anthropic\" yet: with tools, \
             extended thinking needs each reply's signed thinking blocks sent back, and the session \
             history does not keep them. Remove it"
        );
    }
    let owned = [
        ("model", "`[model] model`"),
        ("max_tokens", "`[model] max_output_tokens`"),
        ("temperature", "`[model] temperature`"),
        ("system", "the plugins' instructions"),
        ("tools", "the plugins' tools"),
        ("messages", "the session"),
        ("stream", "the client (it always streams)"),
    ];
    if let Some((key, instead)) = owned.iter().find(|(key, _)| table.contains_key(*key)) {
        anyhow::bail!(
            "`[model] extra_body.{key}` would replace what the host sends; it comes from {instead}"
        );
    }
    match serde_json::to_value(table)? {
        serde_json::Value::Object(map) => Ok(map),
        _ => unreachable!("a TOML table is a JSON object"),
    }
}

/// `{base_url}/v1/messages`. A `base_url` that already ends in `/v1` is taken as meaning
/// the same endpoint.
fn messages_url(base_url: &str) -> anyhow::Result<Uri> {
    let base = base_url.trim_end_matches('/');
    http::endpoint_url(base.strip_suffix("/v1").unwrap_or(base), "/v1/messages")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Provider;

    fn config(extra_body: &str, base_url: Option<&str>) -> ModelConfig {
        ModelConfig {
            provider: Provider::Anthropic,
            base_url: base_url.map(str::to_owned),
            model: "claude-test".into(),
            // Set by no test or machine: the key is missing.
            api_key_env: Some("AGENT_HOST_UNIT_TEST_NO_SUCH_KEY".into()),
            extra_body: toml::from_str(extra_body).unwrap(),
            ..ModelConfig::default()
        }
    }

    fn refusal(extra_body: &str, base_url: Option<&str>) -> String {
        match AnthropicClient::from_config(&config(extra_body, base_url)) {
            Ok(_) => panic!("accepted: {extra_body}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn extended_thinking_in_extra_body_is_refused_naming_the_field() {
        let error =
            refusal("thinking = { type = \"enabled\", budget_tokens = 2048 }", Some("http://127.0.0.1:9"));
        assert!(
            error.contains("`[model] extra_body.thinking`") && error.contains("signed thinking blocks"),
            "{error}"
        );
    }

    #[test]
    fn extra_body_may_not_replace_what_the_client_sends() {
        let error = refusal("max_tokens = 10", Some("http://127.0.0.1:9"));
        assert!(error.contains("extra_body.max_tokens") && error.contains("max_output_tokens"), "{error}");
        let error = refusal("stream = false", Some("http://127.0.0.1:9"));
        assert!(error.contains("extra_body.stream"), "{error}");
        let client = AnthropicClient::from_config(&config(
            "top_k = 5\nmetadata = { user_id = \"u\" }",
            Some("http://127.0.0.1:9"),
        ))
        .unwrap();
        assert_eq!(
            serde_json::Value::Object(client.settings.extra.clone()),
            serde_json::json!({"top_k": 5, "metadata": {"user_id": "u"}})
        );
        assert_eq!(client.settings.max_tokens, DEFAULT_MAX_TOKENS, "Messages needs a max_tokens");
    }

    #[test]
    fn the_official_endpoint_without_a_key_is_refused_naming_the_variable() {
        let error = refusal("", None);
        assert!(
            error.contains("AGENT_HOST_UNIT_TEST_NO_SUCH_KEY") && error.contains("api_key_env"),
            "{error}"
        );
    }

    #[test]
    fn the_endpoint_is_base_url_and_v1_messages_once() {
        for (base, expected) in [
            ("https://api.anthropic.com", "https://api.anthropic.com/v1/messages"),
            ("https://api.anthropic.com/", "https://api.anthropic.com/v1/messages"),
            ("https://gateway.internal/anthropic/v1", "https://gateway.internal/anthropic/v1/messages"),
        ] {
            assert_eq!(messages_url(base).unwrap().to_string(), expected);
        }
        let error = messages_url("ftp://user:pw@host").unwrap_err().to_string();
        assert!(error.contains("http or https") && !error.contains("pw"), "{error}");
        let client = AnthropicClient::from_config(&config("", Some("http://127.0.0.1:9"))).unwrap();
        assert_eq!(client.describe(), "claude-test at http://127.0.0.1:9/v1/messages");
    }

    #[test]
    fn a_wait_that_runs_out_is_final_and_names_its_setting_before_text_and_after() {
        let client = AnthropicClient::from_config(&config("", Some("http://127.0.0.1:9"))).unwrap();
        let lapsed = |lapse, text: &str| {
            let partial = ModelReply { text: text.into(), ..ModelReply::default() };
            client.interrupted(Interrupted { cause: Cause::Transport(Timed::Lapsed(lapse)), partial })
        };
        match lapsed(Lapse::FirstByte(Duration::from_secs(120)), "") {
            Failure::Final(ModelError::Stream { detail }) => {
                assert!(detail.contains("nothing within 120 s (`first_byte_timeout_secs`"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
        match lapsed(Lapse::Whole(Duration::from_secs(600)), "") {
            Failure::Final(ModelError::Timeout { secs: 600 }) => {}
            other => panic!("{other:?}"),
        }
        match lapsed(Lapse::Idle(Duration::from_secs(60)), "Half of it") {
            Failure::Final(ModelError::Cut { detail, partial }) => {
                assert!(
                    detail.contains("quiet for 60 s") && detail.contains("`idle_timeout_secs`"),
                    "{detail}"
                );
                assert_eq!(partial.text, "Half of it");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_prompt_too_long_is_told_from_other_bad_requests() {
        assert!(too_long("invalid_request_error: prompt is too long: 208310 tokens > 200000 maximum"));
        assert!(too_long(
            "invalid_request_error: input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000"
        ));
        assert!(!too_long(
            "invalid_request_error: messages.1: `tool_use` ids were found without `tool_result` blocks"
        ));
    }
}
