//! The HTTP transport under the model clients: hyper's pooled HTTP/1.1 client over rustls
//! (ring, webpki roots), following no redirect (a POST that moved is a `base_url` to correct,
//! which the client says, not one to chase), with the proxy decided once, when the client is
//! built, so that an error can name it (`route.rs`).

mod route;

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyDataStream, BodyExt, Full, LengthLimitError, Limited};
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, PROXY_AUTHORIZATION};
use hyper::{Method, Request, Response, Uri};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use route::Route;

/// Idle pooled connections are closed after this long.
const POOL_IDLE: Duration = Duration::from_secs(90);

/// A response body as the transport hands it over.
pub type Body = hyper::body::Incoming;

/// A pooled HTTP/1.1 client for JSON posts to one endpoint.
pub struct HttpClient {
    client: Client<HttpsConnector<Route>, Full<Bytes>>,
    proxy: Option<Uri>,
    /// The proxy's credentials, sent with each request when requests go to it whole.
    proxy_auth: Option<HeaderValue>,
}

/// A transport failure: the connection could not be made or broke before the response head.
pub type TransportError = hyper_util::client::legacy::Error;

impl HttpClient {
    /// A client for `endpoint`: straight to it, or through the proxy that `HTTPS_PROXY`,
    /// `HTTP_PROXY` or `ALL_PROXY` name for it (unless `NO_PROXY` exempts it), read the way
    /// curl reads them.
    pub fn new(endpoint: &Uri, connect_timeout: Duration) -> Self {
        Self::with_proxies(endpoint, connect_timeout, &Matcher::from_env())
    }

    fn with_proxies(endpoint: &Uri, connect_timeout: Duration, proxies: &Matcher) -> Self {
        let intercept = proxies.intercept(endpoint);
        let proxy = intercept.as_ref().map(|intercept| intercept.uri().clone());
        let auth = intercept.as_ref().and_then(|intercept| intercept.basic_auth().cloned());
        let route = Route::new(endpoint, proxy.as_ref().map(|proxy| (proxy, auth.clone())), connect_timeout);
        let proxy_auth = auth.filter(|_| route.forwards());
        let connector = HttpsConnectorBuilder::new()
            .with_tls_config(crate::tls::client_config())
            .https_or_http()
            .enable_http1()
            .wrap_connector(route);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(POOL_IDLE)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Self { client, proxy, proxy_auth }
    }

    /// The proxy requests go through, if any.
    pub fn proxy(&self) -> Option<&Uri> {
        self.proxy.as_ref()
    }

    /// POSTs `body` as JSON to `uri` with `headers` (credentials, versions: built once by
    /// the caller); resolves at the response head.
    pub async fn post_json(
        &self,
        uri: &Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Response<Body>, TransportError> {
        let json = HeaderValue::from_static("application/json");
        self.client.request(self.request(Method::POST, uri, Some(json), headers, body)).await
    }

    /// GETs `uri` with `headers`; resolves at the response head. For probing an endpoint
    /// (`--check`), not for model calls.
    pub async fn get(&self, uri: &Uri, headers: &HeaderMap) -> Result<Response<Body>, TransportError> {
        self.client.request(self.request(Method::GET, uri, None, headers, Bytes::new())).await
    }

    /// A request with `headers` over the transport's own (which they replace), and the
    /// proxy's credentials when it goes to the proxy whole.
    fn request(
        &self,
        method: Method,
        uri: &Uri,
        content_type: Option<HeaderValue>,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = uri.clone();
        let sent = request.headers_mut();
        sent.insert(ACCEPT, HeaderValue::from_static("*/*"));
        if let Some(content_type) = content_type {
            sent.insert(CONTENT_TYPE, content_type);
        }
        sent.extend(headers.clone());
        if let Some(auth) = &self.proxy_auth {
            sent.insert(PROXY_AUTHORIZATION, auth.clone());
        }
        request
    }
}

/// A proxy's address fit to print: scheme, host and port, without any credentials it carries.
pub fn shown_proxy(proxy: &Uri) -> String {
    let scheme = proxy.scheme_str().unwrap_or("http");
    let host = proxy.host().unwrap_or("?");
    match proxy.port_u16() {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    }
}

/// `path` under the endpoint `base_url` names, checked once for every client and the probe:
/// http or https, with a host. The error names `model.base_url`, with its credentials and
/// query taken out.
pub fn endpoint_url(base_url: &str, path: &str) -> anyhow::Result<Uri> {
    let not_a_url = |detail: String| {
        anyhow::anyhow!("`model.base_url` `{}` is not a URL: {detail}", super::error::redact_url(base_url))
    };
    let url = format!("{}{path}", base_url.trim_end_matches('/'));
    let uri: Uri = url.parse().map_err(|error: hyper::http::uri::InvalidUri| not_a_url(error.to_string()))?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http" | "https"), Some(_)) => Ok(uri),
        (Some(other), Some(_)) => Err(not_a_url(format!("the scheme must be http or https, not `{other}`"))),
        _ => Err(not_a_url("it needs a scheme and a host, like https://api.example.com".into())),
    }
}

/// The `Authorization` header for a bearer `key`, marked sensitive so no debug output shows it.
pub fn bearer(key: &str) -> Option<HeaderValue> {
    secret(&format!("Bearer {key}"))
}

/// `value` (an API key, or a header built from one) as a header, or the error that names the
/// variable `key_env` it came from; the key itself is never repeated.
pub fn key_header(value: Option<HeaderValue>, key_env: &str) -> anyhow::Result<HeaderValue> {
    value.ok_or_else(|| {
        anyhow::anyhow!("the API key in {key_env} has characters an HTTP header cannot carry (a line break?)")
    })
}

/// A header value that carries a secret, marked sensitive so no debug output shows it;
/// `None` when it has characters a header cannot carry (a line break, say).
pub fn secret(value: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(value).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// `[model] headers`: each header with the value of the variable it names. A variable that
/// is unset or empty is an error naming it; so is a value a header cannot carry.
pub fn configured_headers(headers: &BTreeMap<String, String>) -> anyhow::Result<HeaderMap> {
    let mut map = HeaderMap::new();
    for (name, variable) in headers {
        let value = std::env::var(variable).ok().filter(|value| !value.is_empty()).ok_or_else(|| {
            anyhow::anyhow!("`[model] headers.{name}` reads the variable {variable}, which is not set")
        })?;
        let value = secret(&value).ok_or_else(|| {
            anyhow::anyhow!(
                "the variable {variable} (for `[model] headers.{name}`) has characters a header cannot carry"
            )
        })?;
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| anyhow::anyhow!("`[model] headers.{name}` is not an HTTP header name"))?;
        map.insert(name, value);
    }
    Ok(map)
}

/// An error reading a body: the transport's, or the body outgrew its cap.
pub type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// What an error reading a body (capped at `max_bytes`) says, for both clients: the cap
/// it outgrew, or where the connection broke.
pub fn body_error_text(error: &(dyn std::error::Error + 'static), max_bytes: usize) -> String {
    if over_cap(error) {
        let cap = max_bytes >> 20;
        return format!("the reply is longer than {cap} MiB, the cap `endpoint_body_mb` in [model]");
    }
    format!("the connection broke: {}", super::retry::root_cause(error))
}

/// Whether `error` is a body that outgrew its cap.
pub fn over_cap(error: &(dyn std::error::Error + 'static)) -> bool {
    error.downcast_ref::<LengthLimitError>().is_some()
}

/// The whole body of `response`, refused once it passes `max_bytes`.
pub async fn read_body(response: Response<Body>, max_bytes: usize) -> Result<Bytes, BodyError> {
    Ok(Limited::new(response.into_body(), max_bytes).collect().await?.to_bytes())
}

/// The body of `response` as a stream of chunks, as they arrive; ends in an error once it
/// passes `max_bytes`.
pub fn body_stream(response: Response<Body>, max_bytes: usize) -> BodyDataStream<Limited<Body>> {
    BodyDataStream::new(Limited::new(response.into_body(), max_bytes))
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;

    #[test]
    fn an_endpoint_is_its_base_url_and_path_or_an_error_naming_model_base_url() {
        let joined = endpoint_url("http://127.0.0.1:8080/v1/", "/chat/completions").unwrap();
        assert_eq!(joined.to_string(), "http://127.0.0.1:8080/v1/chat/completions");
        for (base, reason) in [
            ("ftp://user:pw@host/v1", "the scheme must be http or https, not `ftp`"),
            ("localhost:8080", "is not a URL: invalid"),
            ("/v1", "it needs a scheme and a host"),
            ("http://exa mple.com", "invalid"),
        ] {
            let error = endpoint_url(base, "/messages").unwrap_err().to_string();
            assert!(error.starts_with("`model.base_url` `") && error.contains(reason), "{base}: {error}");
            assert!(!error.contains("pw"), "{error}");
        }
    }

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

    /// A proxy on loopback that takes one connection: reads its head and `body` more bytes,
    /// reports the head, writes `answer`.
    async fn one_shot_proxy(
        body: usize,
        answer: &'static [u8],
    ) -> (std::net::SocketAddr, tokio::sync::oneshot::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (seen_tx, seen_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let (mut client, _) = listener.accept().await.unwrap();
            let head = read_head(&mut client).await;
            client.read_exact(&mut vec![0u8; body]).await.unwrap();
            client.write_all(answer).await.unwrap();
            seen_tx.send(head).unwrap();
        });
        (address, seen_rx)
    }

    #[tokio::test]
    async fn a_proxied_endpoint_is_reached_through_the_proxy_with_its_credentials() {
        // The proxy takes the forwarded request whole and answers `{}`.
        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
        let (proxy_address, seen_rx) = one_shot_proxy(2, answer).await;
        let proxies = Matcher::builder().http(format!("http://user:secret@{proxy_address}")).build();
        let endpoint: Uri = "http://models.internal:8080/v1/chat/completions".parse().unwrap();
        let client = HttpClient::with_proxies(&endpoint, Duration::from_secs(5), &proxies);
        assert_eq!(client.proxy().map(|uri| uri.port_u16()), Some(Some(proxy_address.port())));
        let response =
            client.post_json(&endpoint, &HeaderMap::new(), Bytes::from_static(b"{}")).await.unwrap();
        assert_eq!(read_body(response, 2).await.unwrap(), Bytes::from_static(b"{}"));
        let head = seen_rx.await.unwrap();
        assert!(
            head.starts_with("POST http://models.internal:8080/v1/chat/completions HTTP/1.1\r\n"),
            "{head}"
        );
        // base64("user:secret")
        assert!(head.to_ascii_lowercase().contains("proxy-authorization: basic dxnlcjpzzwnyzxq="), "{head}");
    }

    #[tokio::test]
    async fn an_https_endpoint_is_reached_through_a_tunnel_the_proxy_opens_with_its_credentials() {
        // The proxy takes one CONNECT, says the tunnel is open and closes it, so the TLS
        // handshake that would follow fails.
        let (proxy_address, seen_rx) =
            one_shot_proxy(0, b"HTTP/1.1 200 Connection established\r\n\r\n").await;

        let proxies = Matcher::builder().https(format!("http://user:secret@{proxy_address}")).build();
        let endpoint: Uri = "https://models.internal/v1/chat/completions".parse().unwrap();
        let client = HttpClient::with_proxies(&endpoint, Duration::from_secs(5), &proxies);
        let sent = client.post_json(&endpoint, &HeaderMap::new(), Bytes::from_static(b"{}")).await;
        assert!(sent.is_err(), "the tunnel closed before any TLS");
        let head = seen_rx.await.unwrap();
        assert!(head.starts_with("CONNECT models.internal:443 HTTP/1.1\r\n"), "{head}");
        assert!(head.to_ascii_lowercase().contains("proxy-authorization: basic dxnlcjpzzwnyzxq="), "{head}");
        assert!(!head.contains("POST"), "nothing of the request goes to the proxy in the clear: {head}");
    }

    #[tokio::test]
    async fn a_socks_proxy_is_refused_by_name_at_the_first_connection() {
        let proxies = Matcher::builder().all("socks5://proxy.internal:1080".to_owned()).build();
        let endpoint: Uri = "http://models.internal:8080/v1/chat/completions".parse().unwrap();
        let client = HttpClient::with_proxies(&endpoint, Duration::from_secs(5), &proxies);
        let error = client.post_json(&endpoint, &HeaderMap::new(), Bytes::new()).await.unwrap_err();
        let cause = crate::model::retry::root_cause(&error);
        assert_eq!(
            cause,
            "the proxy socks5://proxy.internal:1080 is not one this host speaks to: only http:// and \
             https:// proxies are"
        );
    }

    #[tokio::test]
    async fn a_body_past_its_cap_is_refused_as_over_the_cap() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            read_head(&mut stream).await;
            stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123456789").await.unwrap();
        });
        let endpoint: Uri = format!("http://{address}/v1").parse().unwrap();
        let client = HttpClient::with_proxies(&endpoint, Duration::from_secs(5), &Matcher::builder().build());
        let response =
            client.post_json(&endpoint, &HeaderMap::new(), Bytes::from_static(b"{}")).await.unwrap();
        let error = read_body(response, 4).await.unwrap_err();
        assert!(over_cap(&*error), "{error}");
    }

    #[test]
    fn an_endpoint_no_proxy_exempts_or_no_proxy_names_is_reached_directly() {
        let endpoint: Uri = "http://models.internal:8080/v1/chat/completions".parse().unwrap();
        let exempt = Matcher::builder().http("http://proxy:3128").no("models.internal").build();
        assert!(HttpClient::with_proxies(&endpoint, Duration::from_secs(5), &exempt).proxy().is_none());
        let https_only = Matcher::builder().https("http://proxy:3128").build();
        assert!(HttpClient::with_proxies(&endpoint, Duration::from_secs(5), &https_only).proxy().is_none());
    }
}
