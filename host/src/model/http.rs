//! The HTTP transport under the model client: hyper's pooled HTTP/1.1 client over rustls
//! (webpki roots), with nothing between it and the request but the proxy the environment
//! names, if any.
//!
//! reqwest wraps this same client in redirect, retry and proxy layers that print and parse
//! the URL again on every request and on every response — about a tenth of a model call's
//! host-side time in the load bench. A model endpoint needs none of that per request: the
//! client retries by itself (`openai.rs`), a redirect is a misconfigured `base_url`, and
//! whether the endpoint sits behind a proxy is decided once, when the client is built.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyDataStream, BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tower_service::Service;

/// Idle pooled connections are closed after this long (what reqwest did too).
const POOL_IDLE: Duration = Duration::from_secs(90);

/// A pooled HTTP/1.1 client for JSON posts to one endpoint.
pub struct HttpClient {
    client: Client<HttpsConnector<Dial>, Full<Bytes>>,
    proxy: Option<Uri>,
}

/// A transport failure: the connection could not be made or broke before the response head.
pub type TransportError = hyper_util::client::legacy::Error;

impl HttpClient {
    /// A client for `endpoint`: straight to it, or through the proxy that `HTTPS_PROXY`,
    /// `HTTP_PROXY` or `ALL_PROXY` name for it (unless `NO_PROXY` exempts it), read the way
    /// curl reads them. Through a proxy, connections are CONNECT tunnels, for `http`
    /// endpoints too.
    pub fn new(endpoint: &Uri, connect_timeout: Duration) -> Self {
        Self::with_proxies(endpoint, connect_timeout, &Matcher::from_env())
    }

    fn with_proxies(endpoint: &Uri, connect_timeout: Duration, proxies: &Matcher) -> Self {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(connect_timeout));
        let (dial, proxy) = match proxies.intercept(endpoint) {
            None => (Dial::Direct(http), None),
            Some(proxy) => {
                let mut tunnel = Tunnel::new(proxy.uri().clone(), http);
                if let Some(auth) = proxy.basic_auth() {
                    tunnel = tunnel.with_auth(auth.clone());
                }
                (Dial::Tunnel(tunnel), Some(proxy.uri().clone()))
            }
        };
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(dial);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(POOL_IDLE)
            .build(https);
        Self { client, proxy }
    }

    /// The proxy requests go through, if any.
    pub fn proxy(&self) -> Option<&Uri> {
        self.proxy.as_ref()
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

/// How a connection to the endpoint is made: a TCP connection to it, or a CONNECT tunnel
/// through a proxy. TLS, when the endpoint is `https`, goes on top of either.
#[derive(Clone)]
enum Dial {
    Direct(HttpConnector),
    Tunnel(Tunnel<HttpConnector>),
}

type DialError = Box<dyn std::error::Error + Send + Sync>;

impl Service<Uri> for Dial {
    type Response = TokioIo<TcpStream>;
    type Error = DialError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, DialError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), DialError>> {
        match self {
            Dial::Direct(http) => http.poll_ready(cx).map_err(Into::into),
            Dial::Tunnel(tunnel) => tunnel.poll_ready(cx).map_err(Into::into),
        }
    }

    fn call(&mut self, endpoint: Uri) -> Self::Future {
        match self {
            Dial::Direct(http) => {
                let connecting = http.call(endpoint);
                Box::pin(async move { connecting.await.map_err(Into::into) })
            }
            Dial::Tunnel(tunnel) => {
                // The tunnel assumes port 443 when the URI names none.
                let connecting = tunnel.call(with_default_port(endpoint));
                Box::pin(async move { connecting.await.map_err(Into::into) })
            }
        }
    }
}

/// `uri` with its scheme's port spelled out.
fn with_default_port(uri: Uri) -> Uri {
    if uri.port().is_some() || uri.scheme_str() != Some("http") {
        return uri;
    }
    let host = uri.host().unwrap_or_default();
    let mut parts = uri.clone().into_parts();
    parts.authority = format!("{host}:80").parse().ok();
    Uri::from_parts(parts).unwrap_or(uri)
}

/// The `Authorization` header for a bearer `key`, marked sensitive so no debug output shows it.
pub fn bearer(key: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(&format!("Bearer {key}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// An error reading a body: the transport's, or the body outgrew its cap.
pub type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// Whether `error` is a body that outgrew its cap.
pub fn over_cap(error: &(dyn std::error::Error + 'static)) -> bool {
    error.downcast_ref::<LengthLimitError>().is_some()
}

/// The whole body of `response`, refused once it passes `max_bytes`.
pub async fn read_body(response: Response<Incoming>, max_bytes: usize) -> Result<Bytes, BodyError> {
    Ok(Limited::new(response.into_body(), max_bytes).collect().await?.to_bytes())
}

/// The body of `response` as a stream of chunks, as they arrive; ends in an error once it
/// passes `max_bytes`.
pub fn body_stream(response: Response<Incoming>, max_bytes: usize) -> BodyDataStream<Limited<Incoming>> {
    BodyDataStream::new(Limited::new(response.into_body(), max_bytes))
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// Reads one request head (up to the blank line) from `stream`.
    async fn read_head(stream: &mut TcpStream) -> String {
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0u8; 1];
            if stream.read(&mut byte).await.unwrap() == 0 {
                break;
            }
            head.push(byte[0]);
        }
        String::from_utf8(head).unwrap()
    }

    #[tokio::test]
    async fn a_proxied_endpoint_is_reached_through_a_connect_tunnel() {
        // The endpoint: answers one request with `{}`.
        let endpoint_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint_address = endpoint_listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut stream, _) = endpoint_listener.accept().await.unwrap();
            read_head(&mut stream).await;
            stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}").await.unwrap();
        });
        // The proxy: takes one CONNECT, reports its request line, then relays both ways.
        let proxy_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy_address = proxy_listener.local_addr().unwrap();
        let (seen_tx, seen_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let (mut client, _) = proxy_listener.accept().await.unwrap();
            let head = read_head(&mut client).await;
            seen_tx.send(head.lines().next().unwrap_or_default().to_owned()).unwrap();
            client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await.unwrap();
            let mut upstream = TcpStream::connect(endpoint_address).await.unwrap();
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        });

        let proxies = Matcher::builder().http(format!("http://{proxy_address}")).build();
        let endpoint: Uri = format!("http://{endpoint_address}/v1/chat/completions").parse().unwrap();
        let client = HttpClient::with_proxies(&endpoint, Duration::from_secs(5), &proxies);
        assert_eq!(client.proxy().map(|uri| uri.port_u16()), Some(Some(proxy_address.port())));
        let response = client.post_json(&endpoint, None, Bytes::from_static(b"{}")).await.unwrap();
        assert_eq!(read_body(response, 2).await.unwrap(), Bytes::from_static(b"{}"));
        assert_eq!(seen_rx.await.unwrap(), format!("CONNECT {endpoint_address} HTTP/1.1"));
    }

    #[test]
    fn an_endpoint_no_proxy_exempts_or_no_proxy_names_is_reached_directly() {
        let endpoint: Uri = "http://models.internal:8080/v1/chat/completions".parse().unwrap();
        let exempt = Matcher::builder().http("http://proxy:3128").no("models.internal").build();
        assert!(HttpClient::with_proxies(&endpoint, Duration::from_secs(5), &exempt).proxy().is_none());
        let https_only = Matcher::builder().https("http://proxy:3128").build();
        assert!(HttpClient::with_proxies(&endpoint, Duration::from_secs(5), &https_only).proxy().is_none());
        assert_eq!(with_default_port(endpoint.clone()), endpoint, "a port already spelled out stays");
        let bare: Uri = "http://models.internal/v1".parse().unwrap();
        assert_eq!(with_default_port(bare).port_u16(), Some(80));
    }
}
