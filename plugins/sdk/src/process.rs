//! Running host processes, for plugins granted `process = true`.
//!
//! The host runs the command with `sh -c` in the plugin's first writable granted folder,
//! with only the environment variables the grant names.

use crate::bindings::agent_host::plugin::process as raw;

pub use raw::RunOutput;

/// Runs `command`, killing it after `timeout_ms` and keeping at most `max_output_bytes` of
/// stdout and of stderr. An error when the grant is missing or the process cannot start.
pub fn run(command: &str, timeout_ms: u64, max_output_bytes: u64) -> Result<RunOutput, String> {
    raw::run(&raw::RunRequest { command: command.to_owned(), timeout_ms, max_output_bytes })
}
