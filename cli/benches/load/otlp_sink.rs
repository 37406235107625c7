//! An OTLP/HTTP collector that keeps nothing: it reads each request whole and answers 200, so
//! an exporter pointed at it does all its work (spans built, batched, encoded, sent) and
//! nothing is measured but that. Counts the requests and bytes it took.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the sink took.
#[derive(Default)]
pub struct Taken {
    pub requests: AtomicU64,
    pub bytes: AtomicU64,
}

/// Starts the sink on loopback; its base URL, and what it takes.
pub fn start() -> (String, Arc<Taken>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    let taken = Arc::new(Taken::default());
    let counting = taken.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counting = counting.clone();
            std::thread::spawn(move || serve(stream, &counting));
        }
    });
    (url, taken)
}

/// Answers every request on one keep-alive connection until the client closes it.
fn serve(stream: std::net::TcpStream, taken: &Taken) {
    let mut writer = stream.try_clone().expect("a second handle");
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        taken.requests.fetch_add(1, Ordering::Relaxed);
        taken.bytes.fetch_add(length as u64, Ordering::Relaxed);
        if writer
            .write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
            )
            .is_err()
        {
            return;
        }
    }
}
