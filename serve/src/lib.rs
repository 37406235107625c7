//! `agent-host serve`: the deployment as an HTTP service many users and programs share — a
//! JSON API under `/v1/` (its OpenAPI document at `/openapi.json`), each session's events as
//! Server-Sent Events, approvals answered over HTTP, the plugins' views (and their choices
//! switched), and a web page at `/` that draws them without knowing any plugin.
//!
//! Callers are principals named by bearer tokens from the environment (`[serve] tokens`); a
//! session belongs to the principal that created it. The server binds to loopback unless
//! told otherwise, and refuses another address without `--insecure` (it speaks no TLS: put
//! it behind a proxy that does). SIGTERM stops accepting, closes the event streams, lets
//! running turns finish within `shutdown_grace_secs`, and exits; every step they committed
//! stays, and a turn cut short resumes with `--session`.

mod api;
mod approver;
mod auth;
use agent_host::unpoisoned::LockUnpoisoned as _;
pub use auth::ONE_TIME_PRINCIPAL;
mod children;
mod commands;
mod events;
mod hub;
mod kept_events;
mod listen;
mod log_stream;
mod metrics;
mod openapi;
mod page;
mod relay;
mod routes;
mod shared;
mod state;
mod turns;
mod views;
mod wakers;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

pub use openapi::document as openapi_document;
use state::App;

use agent_host::agent::Host;

/// A session nothing has used (no turn, no stream, no request) for this long is let go.
const IDLE_SESSION: Duration = Duration::from_secs(300);
const IDLE_SWEEP: Duration = Duration::from_secs(30);
/// Where hosts share the store, a session is let go this soon after its last use, so that
/// any host may take it for the next request.
const IDLE_SHARED: Duration = Duration::from_millis(200);
const IDLE_SHARED_SWEEP: Duration = Duration::from_millis(100);

/// What `serve` was asked on the command line.
pub struct ServeOptions {
    /// `--listen`, else `[serve] listen`.
    pub listen: Option<String>,
    /// Allow an address other than loopback, over plain HTTP.
    pub insecure: bool,
}

/// Why `serve` did not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Config(String),
    #[error("cannot listen on {address}: {source}")]
    Listen { address: String, source: std::io::Error },
}

/// Where a server listens, told once it does.
pub struct Listening {
    pub address: SocketAddr,
    /// The page's address with a one-time token in its fragment (`#token=…`), when the
    /// server made one: on loopback with no `[serve] tokens`. For the operator's eyes only.
    pub sign_in: Option<String>,
}

/// Serves `host` until SIGTERM or Ctrl-C. `ready` is told where once it listens.
pub async fn run(
    host: Arc<Host>,
    options: ServeOptions,
    ready: impl FnOnce(Listening),
) -> Result<(), ServeError> {
    let config = host.config();
    let limits = config.serve.clone();
    let listen = options.listen.unwrap_or_else(|| limits.listen.clone());
    let address: SocketAddr = listen.parse().map_err(|_| {
        ServeError::Config(format!("`{listen}` is not an address to listen on, such as 127.0.0.1:8787"))
    })?;
    if !address.ip().is_loopback() && !options.insecure {
        return Err(ServeError::Config(format!(
            "{address} is not a loopback address: the server speaks plain HTTP, and bearer tokens would cross the \
             network in the clear. Put it behind a proxy that speaks TLS and listen on loopback, or pass --insecure"
        )));
    }
    let (principals, one_time) = if limits.tokens.is_empty() && address.ip().is_loopback() {
        let (principals, token) = auth::Principals::one_time().map_err(ServeError::Config)?;
        (principals, Some(token))
    } else {
        (auth::Principals::from_config(&limits).map_err(ServeError::Config)?, None)
    };
    let app = Arc::new(App::new(host, principals, limits));
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|source| ServeError::Listen { address: address.to_string(), source })?;
    let address = listener.local_addr().unwrap_or(address);
    let sign_in = one_time.map(|token| format!("http://{address}/#token={token}"));
    ready(Listening { address, sign_in });

    let sweeper = {
        let app = app.clone();
        tokio::spawn(async move {
            loop {
                if app.shared.is_some() {
                    tokio::time::sleep(IDLE_SHARED_SWEEP).await;
                    app.let_go_idle(IDLE_SHARED).await;
                } else {
                    tokio::time::sleep(IDLE_SWEEP).await;
                    app.close_idle(IDLE_SESSION);
                }
            }
        })
    };
    let reloads = tokio::spawn(views::follow_reloads(app.clone()));
    let cancels = tokio::spawn(cancel_when_asked(app.clone()));
    let shutdown = app.shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down: no new requests; running turns get the grace period");
        shutdown.cancel();
    });
    let grace = Duration::from_secs(app.limits.shutdown_grace_secs);
    listen::serve(listener, router(app.clone()), &app.limits, app.shutdown.clone()).await;
    // Turns run in tasks of their own: each gets the grace period to reach its end and
    // commit; one still running after it is stopped, keeping every step it committed.
    sweeper.abort();
    reloads.abort();
    cancels.abort();
    let turns = app.running_turns();
    let stragglers: Vec<_> = turns.iter().map(|turn| turn.abort_handle()).collect();
    if tokio::time::timeout(grace, futures_util::future::join_all(turns)).await.is_err() {
        tracing::warn!("turns still running after the grace period were stopped");
        for turn in stragglers {
            turn.abort();
        }
    }
    // What the turns emitted goes to the shared log before the process ends.
    if let Some(shared) = &app.shared {
        shared.relay.flush().await;
    }
    Ok(())
}

/// Where hosts share the store: cancels a turn (or a child agent's) running here when a
/// caller of another host asked for it.
async fn cancel_when_asked(app: Arc<App>) {
    let taken = app.shared.as_ref().and_then(|shared| shared.cancels.lock_unpoisoned().take());
    let Some(mut cancels) = taken else { return };
    while let Some(session) = cancels.recv().await {
        if !app.cancel_here(&session) {
            app.host.cancel_child(&session);
        }
    }
}

async fn wait_for_signal() {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match terminate.as_mut() { Some(signal) => { signal.recv().await; } None => std::future::pending().await } } => {}
    }
}

fn router(app: Arc<App>) -> Router {
    let body_limit = app.limits.max_body_kb * 1024;
    let request_timeout = Duration::from_secs(app.limits.request_timeout_secs);
    let api = Router::new()
        .route("/v1/sessions", post(routes::create_session).get(routes::list_sessions))
        .route("/v1/sessions/{id}", get(routes::get_session).delete(routes::delete_session))
        .route("/v1/sessions/{id}/state", get(routes::session_state))
        .route("/v1/sessions/{id}/children", get(children::list))
        .route("/v1/sessions/{id}/views/{plugin}/{choice}", post(views::switch))
        .route("/v1/sessions/{id}/messages", post(routes::post_message))
        .route("/v1/sessions/{id}/cancel", post(routes::cancel_turn))
        .route("/v1/sessions/{id}/approvals/{approval}", post(routes::answer_approval))
        .route("/v1/sessions/{id}/commands", post(routes::run_command))
        .route("/v1/sessions/{id}/export", get(routes::export_session))
        .route("/v1/plugins", get(routes::plugins))
        .route("/healthz", get(routes::healthz))
        .route("/metrics", get(routes::metrics))
        .route("/readyz", get(routes::readyz))
        .route(
            "/openapi.json",
            get(|| async { ([(axum::http::header::CONTENT_TYPE, "application/json")], openapi::document()) }),
        )
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/markdown.js", get(page::markdown))
        .route("/diff.js", get(page::diff))
        .route("/children.js", get(page::children))
        .route("/style.css", get(page::style))
        // A slow client may not hold a request open: every one but the event stream ends
        // within the timeout, its body included.
        .layer(middleware::from_fn_with_state(request_timeout, within));
    Router::new()
        .route("/v1/sessions/{id}/events", get(events::stream))
        // A reload may build plugins from source: longer than any request should take.
        .route("/v1/reload", post(routes::reload))
        .merge(api)
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(app)
        .layer(middleware::from_fn_with_state(Arc::new(auth::FailedTokens::default()), slow_wrong_tokens))
}

/// A wrong token is answered after the delay its address has earned (none for the first
/// few), so guessing from one address is slow; a right one is never delayed.
async fn slow_wrong_tokens(
    State(failed): State<Arc<auth::FailedTokens>>,
    request: Request,
    next: Next,
) -> Response {
    let peer = listen::peer_of(&request);
    let response = next.run(request).await;
    if response.status() == StatusCode::UNAUTHORIZED
        && let Some(peer) = peer
    {
        let delay = failed.failed(peer.ip(), std::time::Instant::now());
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
    response
}

async fn within(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => api::ApiError(
            StatusCode::REQUEST_TIMEOUT,
            format!("the request took longer than {} s (`[serve] request_timeout_secs`)", limit.as_secs()),
        )
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use axum::body::Body;
    use axum::extract::ConnectInfo;
    use futures_util::FutureExt as _;
    use tower_service::Service as _;

    use super::*;

    /// Whether a request from `peer` is answered at once (its answer ready at the first
    /// poll), rather than held back.
    async fn answered_at_once(router: &mut Router, peer: &str, path: &str) -> bool {
        let mut request = Request::builder().uri(path).body(Body::empty()).unwrap();
        request.extensions_mut().insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
        router.call(request).now_or_never().is_some()
    }

    #[tokio::test]
    async fn wrong_tokens_from_an_address_are_held_back_and_right_ones_never() {
        let mut router = Router::new()
            .route("/wrong", get(|| async { StatusCode::UNAUTHORIZED }))
            .route("/right", get(|| async { StatusCode::OK }))
            .layer(middleware::from_fn_with_state(
                Arc::new(auth::FailedTokens::default()),
                slow_wrong_tokens,
            ));
        let mut at_once = Vec::new();
        for _ in 0..8 {
            at_once.push(answered_at_once(&mut router, "192.0.2.1:4000", "/wrong").await);
        }
        assert_eq!(at_once, [true, true, true, true, true, false, false, false], "a few typos are free");
        assert!(answered_at_once(&mut router, "192.0.2.1:4001", "/right").await, "a right token");
        assert!(answered_at_once(&mut router, "192.0.2.2:4000", "/wrong").await, "another address");
    }
}
