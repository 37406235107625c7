//! The HTTP transport under the model client: hyper's pooled HTTP/1.1 client over rustls
//! (webpki roots), with nothing between it and the request.
//!
//! reqwest wraps this same client in redirect, retry and proxy layers that print and parse
//! the URL again on every request and on every response — about a tenth of a model call's
//! host-side time in the load bench. A model endpoint needs none of them: the client retries
//! by itself (`openai.rs`), a redirect is a misconfigured `base_url`, and a proxy is the
//! endpoint's own business.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyDataStream, BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

/// Idle pooled connections are closed after this long (what reqwest did too).
const POOL_IDLE: Duration = Duration::from_secs(90);

/// A pooled HTTP/1.1 client for JSON posts to one kind of endpoint.
pub struct HttpClient {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

/// A transport failure: the connection could not be made or broke before the response head.
pub type TransportError = hyper_util::client::legacy::Error;

impl HttpClient {
    pub fn new(connect_timeout: Duration) -> Self {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(connect_timeout));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(POOL_IDLE)
            .build(https);
        Self { client }
    }

    /// POSTs `body` as JSON to `uri`, with `authorization` when given; resolves at the
    /// response head.
    pub async fn post_json(
        &self,
        uri: &Uri,
        authorization: Option<&HeaderValue>,
        body: Bytes,
    ) -> Result<Response<Incoming>, TransportError> {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(uri.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(value) = authorization {
            request = request.header(AUTHORIZATION, value.clone());
        }
        let request = request.body(Full::new(body)).expect("a request from a parsed URI is valid");
        self.client.request(request).await
    }
}

/// The `Authorization` header for a bearer `key`, marked sensitive so no debug output shows it.
pub fn bearer(key: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(&format!("Bearer {key}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// The whole body of `response`.
pub async fn read_body(response: Response<Incoming>) -> Result<Bytes, hyper::Error> {
    Ok(response.into_body().collect().await?.to_bytes())
}

/// The body of `response` as a stream of chunks, as they arrive.
pub fn body_stream(response: Response<Incoming>) -> BodyDataStream<Incoming> {
    BodyDataStream::new(response.into_body())
}
