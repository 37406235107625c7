//! `--check`'s look at the model endpoint: does it answer, take the key, know the model?
//! Said plainly when not, with the URL redacted and never the key.
//!
//! OpenAI-compatible: `GET {base}/models`; a 404 there (many local servers have no list)
//! falls back to a one-token chat request, which also shows a parameter the server refuses.
//! A model missing from the list is tried with that request too, since some servers list
//! one name and serve any (llama.cpp's). Anthropic: `GET {base}/v1/models`, then the model
//! itself (`/v1/models/{model}` resolves aliases the list leaves out).

use std::time::Duration;

use bytes::Bytes;
use hyper::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use hyper::{Response, StatusCode, Uri};
use serde_json::{Value, json};

use super::error::{redact, redact_url};
use super::http::{self, HttpClient};
use super::retry::root_cause;
use crate::config::{Config, ModelConfig, Provider};

/// The Messages API version the probe asks for, as the client does.
const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Longest wait for a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A model list's body, at most.
const MAX_LIST_BYTES: usize = 8 << 20;
/// Error text quoted from the endpoint, at most.
const MAX_QUOTED: usize = 1_000;
/// Models named when the configured one is not among them.
const MODELS_SHOWN: usize = 8;

/// What is wrong with the endpoint, in words an operator can act on.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("cannot reach the model endpoint at {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("the model endpoint at {url} refused the API key (HTTP {status}): {advice}")]
    Unauthorized { url: String, status: u16, advice: String },
    #[error(
        "the model endpoint at {url} does not know the model `{model}` (`[model] model`){refusal}; it offers {offered}"
    )]
    UnknownModel { url: String, model: String, refusal: String, offered: String },
    #[error(
        "the model endpoint at {url} refused a one-token request (HTTP {status}), so it would refuse the host's: {body}"
    )]
    Refused { url: String, status: u16, body: String },
    #[error("the model endpoint at {url} answered HTTP {status}{advice}: {body}")]
    Unexpected { url: String, status: u16, advice: String, body: String },
    #[error("{0:#}")]
    Config(anyhow::Error),
}

/// Reaches the endpoint `config` names. `Ok` says what was found; `None` inside when there
/// is nothing to reach (a scripted model, or no endpoint at all: the offline demo).
pub async fn probe(config: &Config) -> Result<Option<String>, ProbeError> {
    let model = &config.model;
    match model.provider {
        Provider::Scripted => Ok(None),
        Provider::Openai => match super::openai::base_url(model) {
            Some(base) => {
                let endpoint = base.endpoint("").map_err(ProbeError::Config)?;
                Probe::new(model, endpoint, openai_headers(model)?).openai().await.map(Some)
            }
            None => Ok(None),
        },
        Provider::Anthropic => {
            let base = model.base_url.as_deref().unwrap_or("https://api.anthropic.com");
            let endpoint = http::endpoint_url(base, "").map_err(ProbeError::Config)?;
            Probe::new(model, endpoint, anthropic_headers(model)?).anthropic().await.map(Some)
        }
    }
}

fn api_key(model: &ModelConfig) -> Option<String> {
    std::env::var(model.key_env()).ok().filter(|key| !key.trim().is_empty())
}

fn openai_headers(model: &ModelConfig) -> Result<HeaderMap, ProbeError> {
    let mut headers = http::configured_headers(&model.headers).map_err(ProbeError::Config)?;
    if let Some(key) = api_key(model) {
        headers.insert(AUTHORIZATION, http::bearer(&key).ok_or_else(|| unsendable_key(model))?);
    }
    Ok(headers)
}

fn anthropic_headers(model: &ModelConfig) -> Result<HeaderMap, ProbeError> {
    let mut headers = http::configured_headers(&model.headers).map_err(ProbeError::Config)?;
    if let Some(key) = api_key(model) {
        headers.insert(
            HeaderName::from_static("x-api-key"),
            http::secret(&key).ok_or_else(|| unsendable_key(model))?,
        );
    }
    headers.insert(HeaderName::from_static("anthropic-version"), HeaderValue::from_static(ANTHROPIC_VERSION));
    Ok(headers)
}

fn unsendable_key(model: &ModelConfig) -> ProbeError {
    ProbeError::Config(anyhow::anyhow!(
        "the API key in {} has characters an HTTP header cannot carry (a line break?)",
        model.key_env()
    ))
}

/// One probe of one endpoint.
struct Probe<'a> {
    model: &'a ModelConfig,
    base: String,
    headers: HeaderMap,
    http: HttpClient,
    /// Taken out of any text the endpoint sends back.
    key: String,
    /// Each request's wait for its answer.
    timeout: Duration,
}

/// An answer: its status and its body (cut at [`MAX_LIST_BYTES`]).
struct Answer {
    url: String,
    status: StatusCode,
    body: Bytes,
}

impl<'a> Probe<'a> {
    /// A probe of `endpoint`, the base URL checked.
    fn new(model: &'a ModelConfig, endpoint: Uri, headers: HeaderMap) -> Self {
        Self {
            model,
            http: HttpClient::new(&endpoint, CONNECT_TIMEOUT),
            base: endpoint.to_string().trim_end_matches('/').to_owned(),
            headers,
            key: api_key(model).unwrap_or_default(),
            timeout: Duration::from_secs(model.first_byte_timeout_secs.max(1)),
        }
    }

    async fn openai(&self) -> Result<String, ProbeError> {
        let list = self.get("/models").await?;
        match list.status {
            StatusCode::NOT_FOUND => match self.one_token().await {
                Ok(()) => Ok(format!(
                    "{} has no model list; a one-token request for `{}` was answered",
                    list.url, self.model.model
                )),
                Err(ProbeError::Refused { url, status: 404, body }) => Err(ProbeError::Unexpected {
                    url,
                    status: 404,
                    advice: format!(
                        " as it did for {} (check `[model] base_url`: it ends where `/chat/completions` \
                         follows, like http://localhost:8080/v1)",
                        list.url
                    ),
                    body,
                }),
                Err(other) => Err(other),
            },
            status if status.is_success() => {
                let offered = self.model_ids(&list)?;
                if offered.contains(&self.model.model) {
                    return Ok(format!("{} lists the model `{}`", list.url, self.model.model));
                }
                match self.one_token().await {
                    Ok(()) => Ok(format!(
                        "{} does not list `{}`, but a one-token request for it was answered",
                        list.url, self.model.model
                    )),
                    Err(ProbeError::Refused { status, body, .. }) => Err(self.unknown_model(
                        &list.url,
                        &offered,
                        format!(" and refused a request for it (HTTP {status}: {body})"),
                    )),
                    Err(other) => Err(other),
                }
            }
            _ => Err(self.unexpected(list, "")),
        }
    }

    async fn anthropic(&self) -> Result<String, ProbeError> {
        let list = self.get("/v1/models?limit=1000").await?;
        if !list.status.is_success() {
            let advice = if list.status == StatusCode::NOT_FOUND {
                " (check `[model] base_url`: it is the API's root, like https://api.anthropic.com, without /v1)"
            } else {
                ""
            };
            return Err(self.unexpected(list, advice));
        }
        let offered = self.model_ids(&list)?;
        if offered.contains(&self.model.model) {
            return Ok(format!("{} lists the model `{}`", list.url, self.model.model));
        }
        // An alias (`claude-sonnet-4-5`) is not in the list but is a model all the same.
        let one = self.get(&format!("/v1/models/{}", self.model.model)).await?;
        match one.status {
            status if status.is_success() => {
                let id = serde_json::from_slice::<Value>(&one.body)
                    .ok()
                    .and_then(|v| v["id"].as_str().map(str::to_owned));
                Ok(format!(
                    "{} knows `{}` (as {})",
                    list.url,
                    self.model.model,
                    id.as_deref().unwrap_or("an alias")
                ))
            }
            StatusCode::NOT_FOUND => Err(self.unknown_model(&list.url, &offered, String::new())),
            _ => Err(self.unexpected(one, "")),
        }
    }

    /// A chat request for one token: what the endpoint makes of the model and the
    /// deployment's own parameters.
    async fn one_token(&self) -> Result<(), ProbeError> {
        let mut body = json!({
            "model": self.model.model,
            "messages": [{"role": "user", "content": "Say OK."}],
            "max_tokens": 1,
            "stream": false,
        });
        if let Some(temperature) = self.model.temperature {
            body["temperature"] = json!(temperature);
        }
        for (key, value) in &self.model.extra_body {
            body[key] = serde_json::to_value(value).unwrap_or(Value::Null);
        }
        let url = format!("{}/chat/completions", self.base);
        let uri = self.uri(&url)?;
        let body = Bytes::from(body.to_string());
        let sent = tokio::time::timeout(self.timeout, self.http.post_json(&uri, &self.headers, body)).await;
        let answer = self.answer(&url, sent).await?;
        match answer.status {
            status if status.is_success() => Ok(()),
            StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY | StatusCode::NOT_FOUND => {
                Err(ProbeError::Refused {
                    url: answer.url,
                    status: answer.status.as_u16(),
                    body: self.quoted(&answer.body),
                })
            }
            _ => Err(self.unexpected(answer, "")),
        }
    }

    async fn get(&self, path: &str) -> Result<Answer, ProbeError> {
        let url = format!("{}{path}", self.base);
        let uri = self.uri(&url)?;
        let sent = tokio::time::timeout(self.timeout, self.http.get(&uri, &self.headers)).await;
        self.answer(&url, sent).await
    }

    /// The answer read whole; a connection that failed, or a refused key, as its error.
    async fn answer(
        &self,
        url: &str,
        sent: Result<Result<Response<http::Body>, http::TransportError>, tokio::time::error::Elapsed>,
    ) -> Result<Answer, ProbeError> {
        let shown = redact_url(url);
        let unreachable = |detail: String| ProbeError::Unreachable { url: shown.clone(), detail };
        let response = match sent {
            Err(_) => return Err(unreachable(format!("no answer within {} s", self.timeout.as_secs()))),
            Ok(Err(error)) => {
                let detail = root_cause(&error);
                return Err(unreachable(match self.http.proxy() {
                    Some(proxy) => format!("through the proxy {}: {detail}", http::shown_proxy(proxy)),
                    None => detail,
                }));
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            let variable = self.model.key_env();
            let advice = if self.key.is_empty() {
                format!("the variable `{variable}` is not set")
            } else {
                format!("check the key in the variable `{variable}`")
            };
            return Err(ProbeError::Unauthorized { url: shown, status: status.as_u16(), advice });
        }
        let read = tokio::time::timeout(self.timeout, http::read_body(response, MAX_LIST_BYTES)).await;
        let body = match read {
            Ok(Ok(body)) => body,
            Ok(Err(error)) => {
                return Err(unreachable(format!("the answer broke off: {}", root_cause(&*error))));
            }
            Err(_) => {
                return Err(unreachable(format!(
                    "the answer did not finish within {} s",
                    self.timeout.as_secs()
                )));
            }
        };
        Ok(Answer { url: shown, status, body })
    }

    /// The ids of a model list (`{"data": [{"id": ...}, ...]}`, both APIs' shape).
    fn model_ids(&self, list: &Answer) -> Result<Vec<String>, ProbeError> {
        let parsed: Option<Vec<String>> =
            serde_json::from_slice::<Value>(&list.body).ok().and_then(|value| {
                value["data"]
                    .as_array()
                    .map(|models| models.iter().filter_map(|m| m["id"].as_str().map(str::to_owned)).collect())
            });
        parsed.ok_or_else(|| ProbeError::Unexpected {
            url: list.url.clone(),
            status: list.status.as_u16(),
            advice: " with something that is not a model list (check `[model] base_url`)".to_owned(),
            body: self.quoted(&list.body),
        })
    }

    fn unknown_model(&self, url: &str, offered: &[String], refusal: String) -> ProbeError {
        ProbeError::UnknownModel {
            url: url.to_owned(),
            model: self.model.model.clone(),
            refusal,
            offered: some_of(offered, &self.model.model),
        }
    }

    fn unexpected(&self, answer: Answer, advice: &str) -> ProbeError {
        ProbeError::Unexpected {
            status: answer.status.as_u16(),
            advice: advice.to_owned(),
            body: self.quoted(&answer.body),
            url: answer.url,
        }
    }

    fn uri(&self, url: &str) -> Result<Uri, ProbeError> {
        url.parse().map_err(|error| {
            ProbeError::Config(anyhow::anyhow!(
                "the model endpoint `{}` is not a URL: {error}",
                redact_url(url)
            ))
        })
    }

    /// Text the endpoint sent, fit to print: without the key, on a bounded length.
    fn quoted(&self, body: &[u8]) -> String {
        let text = redact(String::from_utf8_lossy(body).trim(), &self.key);
        if text.is_empty() {
            return "(no body)".to_owned();
        }
        match text.char_indices().nth(MAX_QUOTED) {
            Some((end, _)) => format!("{}…", &text[..end]),
            None => text,
        }
    }
}

/// A few of `offered`, those closest to `wanted` (the longest shared start) first:
/// `` `a`, `b` and 3 more ``.
fn some_of(offered: &[String], wanted: &str) -> String {
    if offered.is_empty() {
        return "no models at all".to_owned();
    }
    let shared = |id: &str| id.chars().zip(wanted.chars()).take_while(|(a, b)| a == b).count();
    let mut ranked: Vec<&String> = offered.iter().collect();
    ranked.sort_by(|a, b| shared(b).cmp(&shared(a)).then_with(|| a.cmp(b)));
    let shown: Vec<String> =
        ranked.iter().take(MODELS_SHOWN).map(|id| format!("`{}`", crate::sanitize::one_line(id))).collect();
    let more = offered.len().saturating_sub(MODELS_SHOWN);
    if more > 0 { format!("{} and {more} more", shown.join(", ")) } else { shown.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn the_models_named_are_the_closest_first_and_the_rest_counted() {
        let offered = ids(&["whisper-1", "gpt-4o", "gpt-4.1-mini", "gpt-4.1", "dall-e-3"]);
        assert_eq!(
            some_of(&offered, "gpt-4.1-mni"),
            "`gpt-4.1-mini`, `gpt-4.1`, `gpt-4o`, `dall-e-3`, `whisper-1`"
        );
        let many: Vec<String> = (0..11).map(|n| format!("m{n:02}")).collect();
        assert_eq!(some_of(&many, "x"), "`m00`, `m01`, `m02`, `m03`, `m04`, `m05`, `m06`, `m07` and 3 more");
        assert_eq!(some_of(&[], "x"), "no models at all");
    }
}
