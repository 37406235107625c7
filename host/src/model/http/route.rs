//! How a model client's connections are made, decided once for its endpoint: straight to
//! it, to an HTTP proxy that forwards each request whole (an `http://` endpoint), or through
//! a tunnel the proxy opens with CONNECT (an `https://` endpoint). A proxy may itself be
//! reached over TLS (`https://` in the variable that names it).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::Uri;
use hyper::header::HeaderValue;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use tower_service::Service;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A connection to the proxy itself: plain or TLS, as its URI's scheme says.
type ToProxy = HttpsConnector<HttpConnector>;

/// Where the connections of one client go.
#[derive(Clone)]
pub(super) enum Route {
    Direct(HttpConnector),
    /// Requests go to the proxy, in absolute form, with its credentials.
    Forward {
        to_proxy: ToProxy,
        proxy: Uri,
    },
    Tunnel(Tunnel<ToProxy>),
    /// A proxy this client cannot speak to (SOCKS): every connection fails, naming it.
    Unsupported(String),
}

impl Route {
    /// The route to `endpoint`: through `proxy` (with `auth`, its `Proxy-Authorization`
    /// value) when one is set, each TCP connection given `connect_timeout`.
    pub(super) fn new(
        endpoint: &Uri,
        proxy: Option<(&Uri, Option<HeaderValue>)>,
        connect_timeout: Duration,
    ) -> Self {
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        tcp.set_nodelay(true);
        tcp.set_connect_timeout(Some(connect_timeout));
        let Some((proxy, auth)) = proxy else {
            return Self::Direct(tcp);
        };
        if !matches!(proxy.scheme_str(), Some("http" | "https")) {
            return Self::Unsupported(format!(
                "the proxy {} is not one this host speaks to: only http:// and https:// proxies are",
                super::shown_proxy(proxy)
            ));
        }
        let to_proxy = HttpsConnectorBuilder::new()
            .with_tls_config(crate::tls::client_config())
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp);
        if endpoint.scheme_str() == Some("https") {
            let tunnel = Tunnel::new(proxy.clone(), to_proxy);
            Self::Tunnel(match auth {
                Some(auth) => tunnel.with_auth(auth),
                None => tunnel,
            })
        } else {
            Self::Forward { to_proxy, proxy: proxy.clone() }
        }
    }

    /// Whether requests are sent to the proxy whole, and so carry its credentials.
    pub(super) fn forwards(&self) -> bool {
        matches!(self, Self::Forward { .. })
    }
}

impl Service<Uri> for Route {
    type Response = Routed;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Routed, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Each call below waits for its own connector's readiness.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, target: Uri) -> Self::Future {
        match self.clone() {
            Self::Direct(tcp) => Box::pin(async move { Ok(Routed::new(connect(tcp, target).await?, false)) }),
            Self::Forward { to_proxy, proxy } => {
                Box::pin(async move { Ok(Routed::new(connect(to_proxy, proxy).await?, true)) })
            }
            Self::Tunnel(tunnel) => {
                Box::pin(async move { Ok(Routed::new(connect(tunnel, target).await?, false)) })
            }
            Self::Unsupported(why) => Box::pin(async move { Err(why.into()) }),
        }
    }
}

async fn connect<S>(mut connector: S, to: Uri) -> Result<S::Response, BoxError>
where
    S: Service<Uri>,
    S::Error: Into<BoxError>,
{
    std::future::poll_fn(|cx| connector.poll_ready(cx)).await.map_err(Into::into)?;
    connector.call(to).await.map_err(Into::into)
}

/// What a connection is, whichever route made it.
trait Io: Read + Write + Connection + Send + Unpin {}

impl<T: Read + Write + Connection + Send + Unpin> Io for T {}

/// A connection made by a [`Route`]: `proxied` when its requests go to a proxy whole, which
/// tells the client to send them in absolute form.
pub(super) struct Routed {
    io: Box<dyn Io>,
    proxied: bool,
}

impl Routed {
    fn new(io: impl Io + 'static, proxied: bool) -> Self {
        Self { io: Box::new(io), proxied }
    }
}

impl Connection for Routed {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.proxied)
    }
}

impl Read for Routed {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.io).poll_read(cx, buf)
    }
}

impl Write for Routed {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.io).poll_write_vectored(cx, bufs)
    }
}
