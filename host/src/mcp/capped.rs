//! A started server's stdout, read with a bound on one message (one line of JSON-RPC).
//!
//! The MCP library drops a line over its own 16 MiB cap and reads on, so the request it
//! answered waits out its whole `timeout_ms`. Read through [`CappedLines`] the line fails
//! the stream instead, a little before the library's cap: the connection closes, every call
//! waiting on it fails at once (saying why, from [`Oversized`]), and the server restarts.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

/// The most bytes one message may have, its line break included: the MCP library's own cap
/// (`rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH`).
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Set once a server's connection failed on a message over [`MAX_MESSAGE_BYTES`].
#[derive(Debug, Clone, Default)]
pub struct Oversized(Arc<AtomicBool>);

impl Oversized {
    pub fn happened(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    pub fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// `inner`, failing with `InvalidData` as soon as a line grows past [`MAX_MESSAGE_BYTES`].
pub struct CappedLines<R> {
    inner: R,
    /// Bytes of the line being read so far, its break not yet seen.
    line: usize,
    max: usize,
    oversized: Oversized,
}

impl<R> CappedLines<R> {
    pub fn new(inner: R, oversized: Oversized) -> Self {
        Self::with_max(inner, MAX_MESSAGE_BYTES, oversized)
    }

    fn with_max(inner: R, max: usize, oversized: Oversized) -> Self {
        Self { inner, line: 0, max, oversized }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for CappedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        for &byte in &buf.filled()[before..] {
            if byte == b'\n' {
                this.line = 0;
                continue;
            }
            this.line += 1;
            // The break still to come makes the line one byte longer.
            if this.line + 1 > this.max {
                this.oversized.0.store(true, Ordering::Relaxed);
                buf.set_filled(before);
                return Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("a message over {} bytes", this.max),
                )));
            }
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt as _;

    use super::*;

    #[tokio::test]
    async fn lines_within_the_cap_pass_and_a_longer_one_fails_the_stream() {
        let oversized = Oversized::default();
        let mut fine = CappedLines::with_max(&b"1234\n5678\n"[..], 5, oversized.clone());
        let mut read = Vec::new();
        fine.read_to_end(&mut read).await.unwrap();
        assert_eq!(read, b"1234\n5678\n");
        assert!(!oversized.happened());
        let mut long = CappedLines::with_max(&b"1234\n12345\n"[..], 5, oversized.clone());
        let error = long.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(oversized.happened());
    }
}
