//! OpenAI-compatible Chat Completions over HTTP: streaming (SSE) or whole replies,
//! retries with backoff on 429 / 5xx / connections dropped before anything was shown,
//! a first-byte and an idle wait under an outer bound, optional parameters dropped when the
//! endpoint refuses them, errors that never show the key (not even when the endpoint echoes
//! it back).

mod assemble;
mod context_errors;
mod extra_body;
mod injected;
mod params;
mod sniff;
mod stream;
mod user_turns;
mod wire;

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, LOCATION};
use hyper::{Response, StatusCode, Uri};
use tokio::time::timeout_at;

use self::params::{Dropped, Param, Params};
use self::sniff::Looks;
use self::stream::Broken;
use self::wire::BodyOptions;
use crate::config::{InjectedAs, ModelConfig};
use crate::model::deadline::{self, Clock, Timed, Waits};
use crate::model::encodings::Encodings;
use crate::model::error::{redact, redact_url, redirect_text};
use crate::model::http::{self, HttpClient};
use crate::model::retry::{self, Failure, RetryPolicy, root_cause};
use crate::model::{HistoryEncodings, ModelError, ModelReply, ModelRequest};

pub use assemble::ReplyAssembler;
pub use stream::read_event_stream;

/// The endpoint when neither `[model] base_url` nor `OPENAI_BASE_URL` names one.
const OFFICIAL_BASE_URL: &str = "https://api.openai.com/v1";
/// Longest wait for a connection to the endpoint.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of an error body is kept: enough for a template's whole complaint or a
/// validation error's list of fields.
const ERROR_TEXT_BYTES: usize = 2000;

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
    waits: Waits,
    retries: RetryPolicy,
    temperature: Option<f32>,
    max_tokens: Option<u32>,
    injected_as: InjectedAs,
    extra_body: serde_json::Map<String, serde_json::Value>,
    /// Parameters this endpoint refused: not sent again while the client lives.
    dropped: Dropped,
    /// A response body's cap (`[model] endpoint_body_mb`), streamed or whole.
    max_body_bytes: usize,
    /// One streamed event's cap (`[model] sse_line_kb`).
    max_event_bytes: usize,
}

impl OpenAiClient {
    /// The client for `[model]`, or `None` when no endpoint is configured anywhere.
    /// `base_url` falls back to `OPENAI_BASE_URL`; with neither, a key alone means the
    /// official endpoint, and no key means no endpoint.
    pub fn from_config(config: &ModelConfig) -> anyhow::Result<Option<Self>> {
        let api_key = std::env::var(config.key_env()).ok().filter(|key| !key.trim().is_empty());
        let Some(base_url) = base_url(config) else { return Ok(None) };
        let url = base_url.endpoint("/chat/completions")?;
        let mut headers = http::configured_headers(&config.headers)?;
        if let Some(key) = &api_key {
            headers.insert(AUTHORIZATION, http::key_header(http::bearer(key), config.key_env())?);
        }
        Ok(Some(Self {
            http: HttpClient::new(&url, CONNECT_TIMEOUT),
            url,
            model: config.model.clone(),
            api_key,
            headers,
            encodings: Encodings::default(),
            key_env: config.key_env().to_owned(),
            waits: Waits::from_config(config),
            retries: RetryPolicy::from_config(config),
            temperature: config.temperature,
            max_tokens: config.max_output_tokens,
            injected_as: config.injected_as,
            extra_body: extra_body::from_table(&config.extra_body)?,
            dropped: Dropped::default(),
            max_body_bytes: config.max_body_bytes(),
            max_event_bytes: config.max_event_bytes(),
        }))
    }

    pub fn describe(&self) -> String {
        match self.http.proxy() {
            Some(proxy) => {
                format!(
                    "{} at {} (through the proxy {})",
                    self.model,
                    self.shown_url(),
                    http::shown_proxy(proxy)
                )
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
        let mut attempt = 0;
        loop {
            let options = self.body_options(request.max_output_tokens, request.model);
            let body = Bytes::from(wire::request_body(&options, request, &self.encodings, history));
            attempt += 1;
            let failure = match self.attempt(&body, options.sent(), on_text).await {
                Ok(reply) => return Ok(reply),
                Err(Attempt::Failed(failure)) => failure,
                Err(Attempt::Refused { param, error }) => {
                    // Sent again at once without it; that is not one of the retries.
                    attempt -= 1;
                    if self.dropped.drop_param(param) {
                        tracing::warn!(
                            parameter = param.name(),
                            %error,
                            "the model endpoint refused `{}`; sending requests without it from now on",
                            param.name()
                        );
                    }
                    continue;
                }
            };
            match self.retries.after(attempt, failure) {
                Ok(wait) => tokio::time::sleep(wait).await,
                Err(error) => return Err(self.redact(error)),
            }
        }
    }

    fn body_options<'a>(&'a self, max_tokens: Option<u32>, model: Option<&'a str>) -> BodyOptions<'a> {
        BodyOptions {
            model: model.unwrap_or(&self.model),
            temperature: self.temperature,
            max_tokens: max_tokens.or(self.max_tokens),
            include_usage: true,
            injected_as: self.injected_as,
            extra_body: &self.extra_body,
            dropped: self.dropped.get(),
        }
    }

    /// One attempt: the request sent, the reply read, each within its wait.
    async fn attempt(
        &self,
        body: &Bytes,
        sent: Params,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, Attempt> {
        let clock = Clock::start(self.waits);
        let (deadline, lapse) = clock.next();
        let response = timeout_at(deadline, self.send(body, sent))
            .await
            .map_err(|_| Failure::Final(lapse.error()))??;
        Ok(self.read(response, clock, on_text).await?)
    }

    async fn send(&self, body: &Bytes, sent: Params) -> Result<Response<http::Body>, Attempt> {
        let response = self
            .http
            .post_json(&self.url, &self.headers, body.clone())
            .await
            .map_err(|error| Attempt::Failed(self.transport_error(&error)))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(Failure::Final(ModelError::Unauthorized {
                status: status.as_u16(),
                key_env: self.key_env.clone(),
            })
            .into());
        }
        if status.is_redirection() {
            // Not followed: a POST that moved is a `base_url` to correct, not to chase.
            let location = response.headers().get(LOCATION).and_then(|value| value.to_str().ok());
            let body = redirect_text(location);
            return Err(
                Failure::Final(ModelError::Http { status: status.as_u16(), attempts: 1, body }).into()
            );
        }
        let retry_after = retry::retry_after(response.headers());
        let body = http::read_body(response, self.max_body_bytes).await.unwrap_or_default();
        let text = String::from_utf8_lossy(&body);
        // Redacted before it is cut, so no part of an echoed key survives at the cut.
        let text = match &self.api_key {
            Some(key) => redact(&text, key),
            None => text.into_owned(),
        };
        let status = status.as_u16();
        if context_errors::is_context_too_long(status, &text) {
            return Err(Failure::Final(ModelError::ContextTooLong { status, body: short(&text) }).into());
        }
        let error = ModelError::Http { status, attempts: 1, body: short(&text) };
        if status == 400
            && let Some(param) = params::refused(&text, sent)
        {
            return Err(Attempt::Refused { param, error });
        }
        if status == 429 || status >= 500 {
            Err(Failure::Retryable { error, retry_after }.into())
        } else {
            Err(Failure::Final(error).into())
        }
    }

    /// Reads the reply: server-sent events when the endpoint says so or its first bytes
    /// look like them (whatever the content type claims), else one JSON body.
    async fn read(
        &self,
        response: Response<http::Body>,
        clock: Clock,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, Failure> {
        let declared = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        let mut chunks = Box::pin(deadline::timed(http::body_stream(response, self.max_body_bytes), clock));
        let mut peeked: Vec<Bytes> = Vec::new();
        let streamed = declared
            || loop {
                match sniff::looks(&peeked.concat()) {
                    Looks::EventStream => break true,
                    Looks::Whole => break false,
                    Looks::Undecided => {}
                }
                match chunks.next().await {
                    Some(Ok(chunk)) => peeked.push(chunk),
                    Some(Err(error)) => return Err(self.broken(error).into()),
                    None => break false,
                }
            };
        if streamed {
            let all = futures_util::stream::iter(peeked.into_iter().map(Ok)).chain(chunks);
            return stream::read_events(all, self.max_event_bytes, |error| self.broken(error), on_text)
                .await
                .map_err(Failure::from);
        }
        let mut body = BytesMut::from(&peeked.concat()[..]);
        while let Some(chunk) = chunks.next().await {
            body.extend_from_slice(&chunk.map_err(|error| Failure::from(self.broken(error)))?);
        }
        let reply = ReplyAssembler::from_response(&body).map_err(Failure::Final)?;
        if !reply.text.is_empty() {
            on_text(&reply.text);
        }
        Ok(reply)
    }

    /// An error reading the body: a dropped connection may be tried again; a body past its
    /// cap or a wait that ran out is final.
    fn broken(&self, error: Timed<http::BodyError>) -> Broken {
        match error {
            Timed::Lapsed(lapse) => Broken::last(lapse.error()),
            Timed::Transport(error) => Broken {
                error: ModelError::Stream { detail: http::body_error_text(&*error, self.max_body_bytes) },
                retryable: !http::over_cap(&*error),
            },
        }
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
            Some(proxy) => format!("through the proxy {}: {}", http::shown_proxy(proxy), root_cause(error)),
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
}

/// Where the OpenAI client's endpoint comes from.
pub(super) enum BaseUrl {
    Configured(String),
    /// `OPENAI_BASE_URL`, standing in for a `[model] base_url` that is not set.
    FromEnv(String),
    /// The official endpoint: a key is set, and nothing names another.
    Official,
}

impl BaseUrl {
    /// `path` under it, checked; the error says where a URL from the environment came from.
    pub(super) fn endpoint(&self, path: &str) -> anyhow::Result<Uri> {
        match self {
            Self::Configured(url) => http::endpoint_url(url, path),
            Self::FromEnv(url) => http::endpoint_url(url, path)
                .map_err(|error| error.context("OPENAI_BASE_URL, set in place of `model.base_url`")),
            Self::Official => http::endpoint_url(OFFICIAL_BASE_URL, path),
        }
    }
}

/// The OpenAI client's endpoint: `[model] base_url`, else `OPENAI_BASE_URL`, else the
/// official endpoint when a key is set; `None` when there is none at all (the offline demo).
pub(super) fn base_url(config: &ModelConfig) -> Option<BaseUrl> {
    let set = |value: &String| !value.trim().is_empty();
    if let Some(url) = &config.base_url {
        return Some(BaseUrl::Configured(url.clone()));
    }
    if let Some(url) = std::env::var("OPENAI_BASE_URL").ok().filter(set) {
        return Some(BaseUrl::FromEnv(url));
    }
    std::env::var(config.key_env()).ok().filter(set).map(|_| BaseUrl::Official)
}

/// How one attempt failed.
enum Attempt {
    /// For the retry policy to judge.
    Failed(Failure),
    /// A 400 naming an optional parameter the request carried: send it again without.
    Refused { param: Param, error: ModelError },
}

impl From<Failure> for Attempt {
    fn from(failure: Failure) -> Self {
        Attempt::Failed(failure)
    }
}

impl From<Broken> for Failure {
    fn from(broken: Broken) -> Self {
        if broken.retryable {
            Failure::Retryable { error: broken.error, retry_after: None }
        } else {
            Failure::Final(broken.error)
        }
    }
}

fn short(text: &str) -> String {
    let text = text.trim();
    let mut end = text.len().min(ERROR_TEXT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}
