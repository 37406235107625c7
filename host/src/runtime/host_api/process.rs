//! `process.run`: a process for plugins granted `process = true`, run through `sh -c` in
//! the OS sandbox (`crate::sandbox`) unless the deployment opted out.

use std::time::Duration;

use crate::runtime::call::CallState;
use crate::sandbox::{RunLimits, SandboxSpec};

/// What a plugin asks `process.run` for.
#[derive(Debug, Clone)]
pub struct ProcessRequest {
    pub command: String,
    pub timeout_ms: u64,
    pub max_output_bytes: u64,
}

/// How a process ended, and what it printed.
#[derive(Debug, Clone)]
pub struct ProcessOutput {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub truncated: bool,
    /// Set when the call's deadline left less time than the request asked for: the
    /// milliseconds the process was given.
    pub timeout_cut_to_ms: Option<u64>,
    /// The calling plugin's own deadline (`[plugin.limits] timeout_ms`), for a line that
    /// explains a cut.
    pub deadline_ms: u64,
}

impl CallState {
    pub async fn run_process(&mut self, request: ProcessRequest) -> Result<ProcessOutput, String> {
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
        let mut spec = SandboxSpec::new("/bin/sh")
            .arg("-c")
            .arg(&request.command)
            .workdir(workdir)
            .network(grant.network)
            .rlimits(grant.rlimits);
        for (folder, write) in &grant.folders {
            spec = if *write { spec.read_write(folder) } else { spec.read_only(folder) };
        }
        for variable in &grant.env {
            if let Some(value) = std::env::var_os(variable) {
                spec = spec.env(variable, value);
            }
        }
        // The call's own deadline bounds the process: a longer run would end in the
        // call's timeout and lose its output.
        let left = u64::try_from(self.deadline.time_left().as_millis()).unwrap_or(u64::MAX);
        let timeout_ms = request.timeout_ms.min(left);
        let limits = RunLimits {
            timeout: Duration::from_millis(timeout_ms),
            max_output_bytes: usize::try_from(request.max_output_bytes.min(grant.max_output_bytes))
                .unwrap_or(usize::MAX),
        };
        let output = grant.sandbox.run(&spec, limits).await.map_err(|error| error.to_string())?;
        Ok(ProcessOutput {
            status: output.status,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            timed_out: output.timed_out,
            truncated: output.truncated,
            timeout_cut_to_ms: (timeout_ms < request.timeout_ms).then_some(timeout_ms),
            deadline_ms: self.deadline.ms(),
        })
    }
}
