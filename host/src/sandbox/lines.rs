//! Running a spec whose output is read as it comes, line by line: a build step, whose
//! progress is shown while it runs and whose last lines make its error.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use super::{Confinement, Sandbox, SandboxError, SandboxSpec, child};

/// Which of a program's streams a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// A line longer than this is cut where it passes it: a program cannot make the host hold
/// an unbounded line.
const LINE_BYTES: usize = 64 * 1024;

impl Sandbox {
    /// Runs `spec` until it exits or `timeout` passes (then everything it started is killed),
    /// handing each line it writes to `line` as it comes. Returns its exit code (`None` when
    /// killed at the deadline or, unconfined, by a signal).
    pub async fn run_lines(
        &self,
        spec: &SandboxSpec,
        timeout: Duration,
        line: &(dyn Fn(Stream, &str) + Sync),
    ) -> Result<Option<i32>, SandboxError> {
        // Held to the end of the run: dropping it removes the command's cgroup.
        let (mut child, _cgroup) = self.spawn(spec, timeout)?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let group = child.id();
        let unconfined_group = group.filter(|_| self.confinement == Confinement::None);
        let wait = async {
            let status = match tokio::time::timeout(timeout, child.wait()).await {
                Ok(status) => status.map_err(SandboxError::Wait)?.code(),
                Err(_) => {
                    let _ = child.kill().await;
                    None
                }
            };
            // What it left running in its group would hold the pipes open.
            if let Some(group) = unconfined_group {
                child::kill_group(group);
            }
            Ok::<_, SandboxError>(status)
        };
        let (status, (), ()) = tokio::join!(
            wait,
            read_lines(stdout, Stream::Stdout, line),
            read_lines(stderr, Stream::Stderr, line)
        );
        status
    }
}

/// Reads `pipe` to its end, handing each line (without its newline, cut at [`LINE_BYTES`])
/// to `line`.
async fn read_lines(
    pipe: Option<impl AsyncRead + Unpin>,
    stream: Stream,
    line: &(dyn Fn(Stream, &str) + Sync),
) {
    let Some(mut pipe) = pipe else { return };
    let mut pending: Vec<u8> = Vec::new();
    let mut cut = false;
    let mut chunk = [0u8; 8192];
    loop {
        let read = match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        for &byte in &chunk[..read] {
            if byte == b'\n' {
                line(stream, &String::from_utf8_lossy(&pending));
                pending.clear();
                cut = false;
            } else if pending.len() < LINE_BYTES {
                pending.push(byte);
            } else {
                cut = true;
            }
        }
    }
    if !pending.is_empty() || cut {
        line(stream, &String::from_utf8_lossy(&pending));
    }
}
