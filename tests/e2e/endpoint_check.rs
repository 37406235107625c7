//! `--check` reaches the model endpoint and says plainly what is wrong: unreachable (the URL
//! redacted), a refused key (the variable named, never the key), an unknown model (named,
//! with some that exist), a parameter refused (the server's words). `--offline` skips it.
//! Against the OpenAI fake (which has no model list, so the one-token request answers) and
//! small servers of the tests' own for the lists of both APIs.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use agent_host::Config;
use agent_host::model::{ProbeError, probe};
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, config_text, plugin_block};

/// A loopback server for `app`; its address.
async fn serve(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    address
}

/// A deployment whose `[model]` is `model_lines`, parsed as the host parses it.
fn deployment(model_lines: &str) -> Config {
    Config::parse(&format!("[model]\n{model_lines}\n"), std::path::Path::new("/deploy/config.toml")).unwrap()
}

fn openai(base_url: &str, model: &str, key_env: &str) -> Config {
    deployment(&format!("base_url = \"{base_url}\"\nmodel = \"{model}\"\napi_key_env = \"{key_env}\""))
}

#[allow(unsafe_code)]
fn set_env(name: &str, value: &str) {
    // SAFETY: each variable is unique to one test and set before anything reads it.
    unsafe { std::env::set_var(name, value) }
}

/// An OpenAI-compatible server that lists `listed` and answers chat requests for those
/// models only (as the official API does), recording the request bodies.
async fn listing_server(listed: &'static [&'static str]) -> (SocketAddr, Arc<Mutex<Vec<Value>>>) {
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let list = get(move || async move {
        axum::Json(
            json!({"object": "list", "data": listed.iter().map(|id| json!({"id": id, "object": "model"})).collect::<Vec<_>>()}),
        )
    });
    let chat = post(move |State(bodies): State<Arc<Mutex<Vec<Value>>>>, body: String| async move {
        let body: Value = serde_json::from_str(&body).unwrap();
        bodies.lock().unwrap().push(body.clone());
        let model = body["model"].as_str().unwrap_or_default().to_owned();
        if listed.contains(&model.as_str()) {
            axum::Json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}, "finish_reason": "length"}]})).into_response()
        } else {
            let error = json!({"error": {"message": format!("The model `{model}` does not exist"), "code": "model_not_found"}});
            (StatusCode::NOT_FOUND, axum::Json(error)).into_response()
        }
    });
    let app = axum::Router::new()
        .route("/v1/models", list)
        .route("/v1/chat/completions", chat)
        .with_state(bodies.clone());
    (serve(app).await, bodies)
}

#[tokio::test]
async fn a_server_without_a_model_list_is_checked_with_a_one_token_request() {
    let model = FakeModel::start().await;
    model.push(Reply::text("O").whole());
    let found = probe(&openai(&model.url(), "fake", "CHECK_TEST_KEY_UNSET")).await.unwrap().unwrap();
    assert!(found.contains("has no model list; a one-token request for `fake` was answered"), "{found}");
    let sent = model.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0]["model"].clone(), sent[0]["max_tokens"].clone(), sent[0]["stream"].clone()),
        (json!("fake"), json!(1), json!(false))
    );
}

#[tokio::test]
async fn a_parameter_the_server_refuses_is_quoted() {
    let model = FakeModel::start().await;
    model.push(Reply::status(400));
    let config = deployment(&format!(
        "base_url = \"{}\"\nmodel = \"fake\"\ntemperature = 0.5\n[model.extra_body]\ntop_k = 20",
        model.url()
    ));
    let error = probe(&config).await.unwrap_err();
    assert!(matches!(error, ProbeError::Refused { status: 400, .. }), "{error:?}");
    assert!(error.to_string().contains("refused a one-token request (HTTP 400)"), "{error}");
    assert!(error.to_string().ends_with(": scripted status 400"), "{error}");
    let sent = &model.requests()[0];
    assert_eq!(
        (sent["temperature"].clone(), sent["top_k"].clone()),
        (json!(0.5), json!(20)),
        "the deployment's own parameters are tried"
    );
}

#[tokio::test]
async fn a_listed_model_passes_and_an_unknown_one_is_named_with_some_that_exist() {
    let (address, bodies) = listing_server(&["gpt-4.1", "gpt-4.1-mini", "whisper-1"]).await;
    let base = format!("http://{address}/v1");
    let found = probe(&openai(&base, "gpt-4.1-mini", "CHECK_TEST_KEY_UNSET")).await.unwrap().unwrap();
    assert_eq!(found, format!("http://{address}/v1/models lists the model `gpt-4.1-mini`"));
    assert!(bodies.lock().unwrap().is_empty(), "a listed model needs no request");

    let error = probe(&openai(&base, "gpt-4.1-mni", "CHECK_TEST_KEY_UNSET")).await.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ProbeError::UnknownModel { .. }), "{error:?}");
    assert!(text.contains("does not know the model `gpt-4.1-mni` (`[model] model`)"), "{text}");
    assert!(text.contains("The model `gpt-4.1-mni` does not exist"), "the server's own words: {text}");
    assert!(text.ends_with("it offers `gpt-4.1-mini`, `gpt-4.1`, `whisper-1`"), "closest first: {text}");
}

/// Some servers list one name and serve any (llama.cpp's lists the file it loaded).
#[tokio::test]
async fn a_model_missing_from_the_list_that_the_server_serves_anyway_passes() {
    let app = axum::Router::new()
        .route("/v1/models", get(|| async { axum::Json(json!({"data": [{"id": "/models/smollm2.gguf"}]})) }))
        .route(
            "/v1/chat/completions",
            post(|| async { axum::Json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "O"}, "finish_reason": "length"}]})) }),
        );
    let address = serve(app).await;
    let found = probe(&openai(&format!("http://{address}/v1"), "local", "CHECK_TEST_KEY_UNSET"))
        .await
        .unwrap()
        .unwrap();
    assert!(found.contains("does not list `local`, but a one-token request for it was answered"), "{found}");
}

#[tokio::test]
async fn a_refused_key_names_the_variable_and_never_the_key() {
    let app = axum::Router::new().route(
        "/v1/models",
        get(|headers: HeaderMap| async move {
            let sent =
                headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            (StatusCode::UNAUTHORIZED, format!("bad key: {sent}"))
        }),
    );
    let address = serve(app).await;
    set_env("CHECK_TEST_KEY_REFUSED", "sk-never-shown");
    let error =
        probe(&openai(&format!("http://{address}/v1"), "m", "CHECK_TEST_KEY_REFUSED")).await.unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains(
            "refused the API key (HTTP 401): check the key in the variable `CHECK_TEST_KEY_REFUSED`"
        ),
        "{text}"
    );
    assert!(!text.contains("sk-never-shown"), "{text}");

    let unset =
        probe(&openai(&format!("http://{address}/v1"), "m", "CHECK_TEST_KEY_UNSET")).await.unwrap_err();
    assert!(unset.to_string().ends_with("the variable `CHECK_TEST_KEY_UNSET` is not set"), "{unset}");
}

#[tokio::test]
async fn an_unreachable_endpoint_is_named_without_its_credentials() {
    let config =
        openai("http://operator:hunter2@127.0.0.1:9/v1?api_key=sk-query", "m", "CHECK_TEST_KEY_UNSET");
    let error = probe(&config).await.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ProbeError::Unreachable { .. }), "{error:?}");
    assert!(
        text.starts_with("cannot reach the model endpoint at http://[redacted]@127.0.0.1:9/v1?[redacted]"),
        "{text}"
    );
    assert!(!text.contains("hunter2") && !text.contains("sk-query"), "{text}");
}

#[tokio::test]
async fn both_paths_404_point_at_the_base_url() {
    let address = serve(axum::Router::new()).await;
    let error = probe(&openai(&format!("http://{address}"), "m", "CHECK_TEST_KEY_UNSET")).await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains(&format!("answered HTTP 404 as it did for http://{address}/models")), "{text}");
    assert!(text.contains("check `[model] base_url`"), "{text}");
}

/// A Messages API server as the real one answers the model endpoints: `x-api-key` and
/// `anthropic-version` required, the list paged, aliases resolved one by one.
async fn anthropic_server() -> SocketAddr {
    fn refused(headers: &HeaderMap) -> Option<Response> {
        let key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
        if key != Some("sk-ant-test") {
            let error = json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
            return Some((StatusCode::UNAUTHORIZED, axum::Json(error)).into_response());
        }
        if headers.get("anthropic-version").and_then(|v| v.to_str().ok()) != Some("2023-06-01") {
            let error = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "anthropic-version: header is required"}});
            return Some((StatusCode::BAD_REQUEST, axum::Json(error)).into_response());
        }
        None
    }
    let list = get(|headers: HeaderMap| async move {
        refused(&headers).unwrap_or_else(|| {
            let data =
                ["claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "claude-opus-4-1-20250805"]
                    .map(|id| json!({"type": "model", "id": id, "display_name": id}));
            axum::Json(
                json!({"data": data, "has_more": false, "first_id": data[0]["id"], "last_id": data[2]["id"]}),
            )
            .into_response()
        })
    });
    let one = get(|headers: HeaderMap, UrlPath(id): UrlPath<String>| async move {
        refused(&headers).unwrap_or_else(|| match id.as_str() {
            "claude-sonnet-4-5" => axum::Json(json!({"type": "model", "id": "claude-sonnet-4-5-20250929"})).into_response(),
            _ => (StatusCode::NOT_FOUND, axum::Json(json!({"type": "error", "error": {"type": "not_found_error", "message": format!("model: {id}")}}))).into_response(),
        })
    });
    serve(axum::Router::new().route("/v1/models", list).route("/v1/models/{id}", one)).await
}

fn anthropic(address: SocketAddr, model: &str, key_env: &str) -> Config {
    deployment(&format!(
        "provider = \"anthropic\"\nbase_url = \"http://{address}\"\nmodel = \"{model}\"\napi_key_env = \"{key_env}\""
    ))
}

#[tokio::test]
async fn anthropic_models_are_checked_by_list_then_alias_with_the_api_key_and_version() {
    let address = anthropic_server().await;
    set_env("CHECK_TEST_ANTHROPIC_KEY", "sk-ant-test");
    let listed = probe(&anthropic(address, "claude-haiku-4-5-20251001", "CHECK_TEST_ANTHROPIC_KEY"))
        .await
        .unwrap()
        .unwrap();
    assert!(listed.ends_with("lists the model `claude-haiku-4-5-20251001`"), "{listed}");
    let alias =
        probe(&anthropic(address, "claude-sonnet-4-5", "CHECK_TEST_ANTHROPIC_KEY")).await.unwrap().unwrap();
    assert!(alias.ends_with("knows `claude-sonnet-4-5` (as claude-sonnet-4-5-20250929)"), "{alias}");

    let unknown =
        probe(&anthropic(address, "claude-sonet-4-5", "CHECK_TEST_ANTHROPIC_KEY")).await.unwrap_err();
    let text = unknown.to_string();
    assert!(text.contains("does not know the model `claude-sonet-4-5`"), "{text}");
    assert!(
        text.ends_with(
            "it offers `claude-sonnet-4-5-20250929`, `claude-haiku-4-5-20251001`, `claude-opus-4-1-20250805`"
        ),
        "{text}"
    );

    set_env("CHECK_TEST_ANTHROPIC_WRONG", "sk-ant-wrong");
    let refused = probe(&anthropic(address, "claude-haiku-4-5-20251001", "CHECK_TEST_ANTHROPIC_WRONG"))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("check the key in the variable `CHECK_TEST_ANTHROPIC_WRONG`"),
        "{refused}"
    );
    assert!(!refused.to_string().contains("sk-ant-wrong"), "{refused}");
}

fn agent_host() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command.env_remove("OPENAI_API_KEY").env_remove("OPENAI_BASE_URL").env("NO_COLOR", "1");
    command
}

#[tokio::test]
async fn check_exits_2_when_the_endpoint_fails_and_offline_skips_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, config_text("http://127.0.0.1:9/v1", &plugin_block("misbehave", ""))).unwrap();
    let output = agent_host().arg("--config").arg(&config).arg("check").output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: cannot reach the model endpoint at http://127.0.0.1:9/v1/models"),
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).starts_with("misbehave@"),
        "the plugins are listed first"
    );

    let offline =
        agent_host().arg("--config").arg(&config).args(["check", "--offline"]).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&offline.stdout);
    assert!(offline.status.success(), "{}", String::from_utf8_lossy(&offline.stderr));
    assert!(
        stdout.contains("model: fake at http://127.0.0.1:9/v1/chat/completions (not contacted: --offline)"),
        "{stdout}"
    );

    let model = FakeModel::start().await;
    model.push(Reply::text("O").whole());
    std::fs::write(&config, config_text(&model.url(), &plugin_block("misbehave", ""))).unwrap();
    let reached = agent_host().arg("--config").arg(&config).arg("check").output().await.unwrap();
    let stdout = String::from_utf8_lossy(&reached.stdout);
    assert!(reached.status.success(), "{}", String::from_utf8_lossy(&reached.stderr));
    assert!(stdout.contains("model: http://127.0.0.1:"), "{stdout}");
    assert_eq!(model.requests().len(), 1, "one one-token request");
}
