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

/// The result text a model is shown of a command, as the stock tools write it: the exit
/// status, stdout and stderr, then a note for each thing the host did to it — the time cut
/// to what was left of the call's deadline (`asked_ms` being what was asked), a kill at the
/// timeout, the output cut at `max_output_bytes`.
pub fn report(output: &RunOutput, asked_ms: u64, max_output_bytes: u64) -> String {
    let status = match output.status {
        Some(code) => format!("exit status: {code}"),
        None => "exit status: none (killed)".to_owned(),
    };
    let mut text = format!("{status}\nstdout:\n{}\nstderr:\n{}", output.stdout, output.stderr);
    if let Some(cut) = output.timeout_cut_to_ms {
        text.push_str(&format!(
            "\nnote: timeout_ms cut to {cut} ms (asked {asked_ms} ms): what was left of the plugin call's deadline"
        ));
    }
    if output.timed_out {
        let ms = output.timeout_cut_to_ms.unwrap_or(asked_ms);
        text.push_str(&format!("\nnote: timed out after {ms} ms and was killed"));
    }
    if output.truncated {
        text.push_str(&format!("\nnote: output cut at {max_output_bytes} bytes per stream"));
    }
    text
}
