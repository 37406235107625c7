//! `process.run`: a host process for plugins granted `process = true`.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use crate::runtime::bindings::agent_host::plugin::process::{Host, RunOutput, RunRequest};
use crate::runtime::call::CallState;

impl Host for CallState {
    async fn run(&mut self, request: RunRequest) -> Result<RunOutput, String> {
        let name = &self.plugin.name;
        let Some(grant) = self.process.clone() else {
            return Err(format!(
                "plugin `{name}` may not run processes: grant it with `process = true` \
                 under its [plugin.grants] in config.toml"
            ));
        };
        let Some(workdir) = grant.workdir.as_ref() else {
            return Err(format!(
                "plugin `{name}` has no workspace to run processes in: grant it a folder with \
                 `write = true` under its [plugin.grants.dirs] in config.toml"
            ));
        };
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(&request.command)
            .current_dir(workdir)
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so a timeout kills what the shell started too.
            .process_group(0)
            // A call abandoned mid-run must not leave the child behind.
            .kill_on_drop(true);
        for variable in &grant.env {
            if let Some(value) = std::env::var_os(variable) {
                command.env(variable, value);
            }
        }
        let mut child = command.spawn().map_err(|error| format!("cannot start `sh`: {error}"))?;
        let cap = usize::try_from(request.max_output_bytes).unwrap_or(usize::MAX);
        let stdout = tokio::spawn(read_capped(child.stdout.take(), cap));
        let stderr = tokio::spawn(read_capped(child.stderr.take(), cap));
        let timeout = Duration::from_millis(request.timeout_ms);
        let (status, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
            Ok(status) => {
                (status.map_err(|error| format!("waiting for the process: {error}"))?.code(), false)
            }
            Err(_) => {
                // Out of time: kill the whole group; the pipes close and the readers finish.
                if let Some(pid) = child.id() {
                    let _ =
                        std::process::Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).status();
                }
                let _ = child.kill().await;
                (None, true)
            }
        };
        let (stdout, stdout_cut) = stdout.await.unwrap_or_default();
        let (stderr, stderr_cut) = stderr.await.unwrap_or_default();
        Ok(RunOutput {
            status,
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            timed_out,
            truncated: stdout_cut || stderr_cut,
        })
    }
}

/// Reads a pipe to its end, keeping the first `cap` bytes; says whether any were dropped.
/// Reading on past the cap keeps a chatty child from blocking on a full pipe.
async fn read_capped(pipe: Option<impl AsyncRead + Unpin>, cap: usize) -> (Vec<u8>, bool) {
    let Some(mut pipe) = pipe else { return (Vec::new(), false) };
    let mut kept = Vec::new();
    let mut cut = false;
    let mut chunk = [0u8; 8192];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                let room = cap.saturating_sub(kept.len());
                if read > room {
                    cut = true;
                }
                kept.extend_from_slice(&chunk[..read.min(room)]);
            }
        }
    }
    (kept, cut)
}
