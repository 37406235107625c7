//! Running host processes, for plugins granted `process = true` (declare
//! [`Requirement::RunsProcesses`](crate::Requirement) from `configure`).
//!
//! The host runs the command with `sh -c` in the plugin's first writable granted folder,
//! with only the environment variables the grant names.

pub use crate::bindings::agent_host::plugin::process::{RunOutput, RunRequest};
use crate::host::process as raw;

/// Runs `command`, killing it after `timeout_ms` and keeping at most `max_output_bytes` of
/// stdout and of stderr. An error when the grant is missing or the process cannot start.
/// When the host had less time left than `timeout_ms`, the output's `timeout_cut_to_ms`
/// says how much the command really got.
pub fn run(command: &str, timeout_ms: u64, max_output_bytes: u64) -> Result<RunOutput, String> {
    raw::run(&RunRequest { command: command.to_owned(), timeout_ms, max_output_bytes })
}
