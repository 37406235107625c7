//! The connection layer: accepts connections within `[serve] max_connections` (and
//! `max_connections_per_peer` from one address), closing any past either at once, and serves
//! each over HTTP/1 with a bounded wait for headers (`header_timeout_secs`, which also
//! closes a connection idle between requests) and bounded headers (`max_header_kb`). No
//! client, authenticated or not, can hold more than that: a slow or unfinished request is
//! let go, and a flood of connections cannot exhaust the process's descriptors.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_service::Service as _;

use agent_host::config::ServeConfig;
use agent_host::unpoisoned::LockUnpoisoned as _;

/// After an accept fails (out of descriptors, say), a pause before the next: the error
/// would recur at once, and the loop would spin.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Serves `router` on `listener` until `shutdown`, then lets every open connection finish
/// the request it is in and returns once all are closed.
pub async fn serve(listener: TcpListener, router: Router, limits: &ServeConfig, shutdown: CancellationToken) {
    let gate = Arc::new(Gate::new(limits.max_connections, limits.max_connections_per_peer));
    let mut http = hyper::server::conn::http1::Builder::new();
    let header_bytes = limits.max_header_kb * 1024;
    http.timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(limits.header_timeout_secs))
        .max_header_size(header_bytes)
        .max_buf_size(header_bytes.max(8 * 1024));
    let connections = tokio_util::task::TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.cancelled() => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "accepting a connection failed");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        let Some(admitted) = gate.admit(peer.ip()) else {
            tracing::debug!(%peer, "connection closed: past `[serve] max_connections` or `max_connections_per_peer`");
            continue;
        };
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let mut router = router.clone();
            async move { Ok::<_, Infallible>(router.call(request).await.unwrap_or_else(|never| match never {})) }
        });
        let connection = http.serve_connection(TokioIo::new(stream), service);
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            let _admitted = admitted;
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                () = shutdown.cancelled() => {}
            }
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        });
    }
    connections.close();
    connections.wait().await;
}

/// Connections open, in all and by address.
struct Gate {
    most: usize,
    most_per_peer: usize,
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

/// One admitted connection: counted until dropped.
struct Admitted {
    gate: Arc<Gate>,
    peer: IpAddr,
}

impl Gate {
    fn new(most: usize, most_per_peer: usize) -> Self {
        Self { most, most_per_peer, open: Mutex::new((0, HashMap::new())) }
    }

    fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<Admitted> {
        let peer = peer.to_canonical();
        let mut open = self.open.lock_unpoisoned();
        let (total, by_peer) = &mut *open;
        let from_peer = by_peer.entry(peer).or_default();
        if *total >= self.most || *from_peer >= self.most_per_peer {
            if *from_peer == 0 {
                by_peer.remove(&peer);
            }
            return None;
        }
        *total += 1;
        *from_peer += 1;
        Some(Admitted { gate: self.clone(), peer })
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.gate.open.lock_unpoisoned();
        let (total, by_peer) = &mut *open;
        *total = total.saturating_sub(1);
        if let Some(from_peer) = by_peer.get_mut(&self.peer) {
            *from_peer = from_peer.saturating_sub(1);
            if *from_peer == 0 {
                by_peer.remove(&self.peer);
            }
        }
    }
}

/// The peer a request came from, as the accept loop recorded it.
pub fn peer_of<B>(request: &hyper::Request<B>) -> Option<SocketAddr> {
    request.extensions().get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(peer)| *peer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_past_either_cap_are_refused_and_a_closed_one_frees_its_place() {
        let gate = Arc::new(Gate::new(3, 2));
        let (a, b): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "::ffff:127.0.0.2".parse().unwrap());
        let first = gate.admit(a).unwrap();
        let _second = gate.admit(a).unwrap();
        assert!(gate.admit(a).is_none(), "a third from one address");
        let _third = gate.admit(b).unwrap();
        assert!(gate.admit("127.0.0.2".parse().unwrap()).is_none(), "past the total");
        drop(first);
        assert!(gate.admit(b).is_some(), "a place freed");
    }
}
