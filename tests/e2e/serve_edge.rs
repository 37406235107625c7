//! `agent-host serve`'s edge, the real binary on loopback: what a client that never
//! authenticates can make it hold (connections past the caps are closed, a request whose
//! headers never end is let go, an oversized header is refused), tokens too short to keep
//! out a guesser, and event ids that say which run of the session's stream they are from.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};

use crate::support::serve::{Server, serve};
use crate::support::{FakeModel, Reply, config_text};

/// How long the server gets to close a connection it should: generous, never a measure.
const CLOSED_WITHIN: Duration = Duration::from_secs(30);

/// A connection to `server` from `local`, one of loopback's many addresses: the server
/// counts each as a peer of its own.
async fn connect_from(server: &Server, local: &str) -> TcpStream {
    let address: SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
    socket.connect(address).await.unwrap()
}

/// Everything the server sends on `stream` until it closes it, or `None` if it keeps it
/// open past [`CLOSED_WITHIN`].
async fn until_closed(stream: &mut TcpStream) -> Option<String> {
    let mut said = Vec::new();
    let read = async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => said.extend_from_slice(&buffer[..n]),
            }
        }
    };
    tokio::time::timeout(CLOSED_WITHIN, read).await.ok()?;
    Some(String::from_utf8_lossy(&said).into_owned())
}

/// `GET /healthz` on `stream`, kept alive; its status line once the whole answer is read.
async fn healthz(stream: &mut TcpStream) -> String {
    stream.write_all(b"GET /healthz HTTP/1.1\r\nhost: test\r\n\r\n").await.unwrap();
    let mut said = Vec::new();
    let read = async {
        let mut buffer = [0u8; 4096];
        while !said.ends_with(b"\r\n\r\nok") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => said.extend_from_slice(&buffer[..n]),
            }
        }
    };
    tokio::time::timeout(CLOSED_WITHIN, read).await.expect("/healthz answers");
    String::from_utf8_lossy(&said).lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn connections_past_the_caps_are_closed_at_once_and_the_server_keeps_answering() {
    let model = FakeModel::start().await;
    let limits = "max_connections = 6\nmax_connections_per_peer = 4\nheader_timeout_secs = 600";
    let server = serve(&model, "", limits).await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(connect_from(&server, "127.0.0.1").await);
    }
    let mut fifth = connect_from(&server, "127.0.0.1").await;
    assert!(until_closed(&mut fifth).await.is_some(), "a fifth idle connection from one address was kept");

    // Another address is still served, within the total.
    let mut other = connect_from(&server, "127.0.0.2").await;
    assert_eq!(healthz(&mut other).await, "HTTP/1.1 200 OK");
    held.push(other);
    held.push(connect_from(&server, "127.0.0.2").await);
    let mut seventh = connect_from(&server, "127.0.0.3").await;
    assert!(until_closed(&mut seventh).await.is_some(), "a seventh connection in all was kept");

    // One closes; its place is taken again.
    drop(held.remove(0));
    let answered = async {
        loop {
            let mut fresh = connect_from(&server, "127.0.0.3").await;
            fresh
                .write_all(b"GET /healthz HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n")
                .await
                .unwrap();
            if let Some(said) = until_closed(&mut fresh).await
                && said.starts_with("HTTP/1.1 200")
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(CLOSED_WITHIN, answered).await.expect("a freed place is served again");
}

#[tokio::test]
async fn a_request_whose_headers_never_end_and_a_silent_connection_are_closed() {
    let model = FakeModel::start().await;
    let server = serve(&model, "", "header_timeout_secs = 1").await;
    let mut unfinished = connect_from(&server, "127.0.0.1").await;
    unfinished.write_all(b"GET /healthz HTTP/1.1\r\nhost: test\r\n").await.unwrap();
    let mut silent = connect_from(&server, "127.0.0.1").await;
    assert!(until_closed(&mut unfinished).await.is_some(), "a request with one header line was held");
    assert!(until_closed(&mut silent).await.is_some(), "a connection that sent nothing was held");
    let (status, _) = server.call(reqwest::Method::GET, None, "/healthz", None).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn headers_past_max_header_kb_are_refused_and_smaller_ones_served() {
    let model = FakeModel::start().await;
    let server = serve(&model, "", "max_header_kb = 8").await;
    let request = |filler: usize| {
        format!(
            "GET /healthz HTTP/1.1\r\nhost: test\r\nx-filler: {}\r\nconnection: close\r\n\r\n",
            "x".repeat(filler)
        )
    };
    let mut small = connect_from(&server, "127.0.0.1").await;
    small.write_all(request(4 * 1024).as_bytes()).await.unwrap();
    let said = until_closed(&mut small).await.expect("answered and closed");
    assert!(said.starts_with("HTTP/1.1 200"), "{said}");

    let mut large = connect_from(&server, "127.0.0.1").await;
    // The server may close before it has read it all: a failed write is a refusal too.
    let _ = large.write_all(request(64 * 1024).as_bytes()).await;
    let said = until_closed(&mut large).await.expect("closed");
    assert!(!said.starts_with("HTTP/1.1 200"), "a 64 KiB header was taken: {said}");
    assert!(said.is_empty() || said.starts_with("HTTP/1.1 431"), "{said}");
}

#[tokio::test]
async fn a_token_shorter_than_16_bytes_is_refused_at_start_naming_its_variable_not_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "{}\n[serve]\ntokens = {{ alice = \"AGENT_HOST_T_SHORT\" }}\n",
        config_text("http://127.0.0.1:9/v1", "")
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .arg("serve")
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .args(["--listen", "127.0.0.1:0"])
        .env("AGENT_HOST_TEST_KEY", "k")
        .env("AGENT_HOST_T_SHORT", "pass-word-15byt")
        .kill_on_drop(true)
        .output();
    let output =
        tokio::time::timeout(Duration::from_secs(60), run).await.expect("serve refuses to start").unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("AGENT_HOST_T_SHORT") && stderr.contains("16 bytes"), "{stderr}");
    assert!(!stderr.contains("pass-word-15byt"), "the token was echoed: {stderr}");
}

#[tokio::test]
async fn an_event_id_of_another_epoch_or_ahead_of_the_stream_gets_a_gap_and_everything_kept() {
    let model = FakeModel::start().await;
    model.push(Reply::text("one answer"));
    let server = serve(&model, "", "").await;
    let session = server.new_session("alice").await;
    let (status, _) =
        server.post("alice", &format!("/v1/sessions/{session}/messages"), json!({"text": "hi"})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let ended = |event: &Value| event["type"] == "turn_ended";
    let events = server.events_after("alice", &session, None, ended).await;
    let (epoch, _) =
        events[0].0.split_once('-').unwrap_or_else(|| panic!("an id without an epoch: {events:?}"));
    assert!(
        !epoch.is_empty() && events.iter().all(|(id, _)| id.starts_with(&format!("{epoch}-"))),
        "{events:?}"
    );

    // This epoch's id: exactly what followed, no gap.
    let resumed = server.events_after("alice", &session, Some(&events[0].0), ended).await;
    assert_eq!(resumed, events[1..]);

    // An id of another run (after a restart, or once the session was let go while idle),
    // and a plain number this stream never reached: told of a gap, then sent everything.
    for elsewhere in ["0ther0ne-2", "9999"] {
        let resumed = server.events_after("alice", &session, Some(elsewhere), ended).await;
        assert_eq!(resumed[0].1["type"], "gap", "{elsewhere}: {resumed:?}");
        assert_eq!(resumed[0].1["oldest_kept"], 1, "{elsewhere}: {resumed:?}");
        assert_eq!(resumed[1..], events[..], "{elsewhere}");
    }
}
