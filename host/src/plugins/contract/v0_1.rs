//! Contract line 0.1 (`wit/frozen/v0.1`, 0.1.2), frozen: what differs from the current line
//! is converted here. `configure` returns a bare configuration (no requirements); the
//! capabilities have no `status`; `events.emit` has no display form; `process.run` cannot
//! say that the host cut a command's time, so the host says it on the command's stderr.

use wasmtime::Store;
use wasmtime::component::{Func, Linker};

use self::agent_host::plugin::types;
use super::super::types::{Configured, Exports, Manifest};
use crate::runtime::CallState;
use crate::runtime::host_api::{ProcessOutput, ProcessRequest};

wasmtime::component::bindgen!({
    world: "plugin",
    path: "../wit/frozen/v0.1",
    // As in the current line (see `v0_2.rs`).
    exports: { default: async },
    imports: {
        "agent-host:plugin/process.run": async,
        "agent-host:plugin/state.set": trappable,
        "agent-host:plugin/events.emit": trappable,
        "agent-host:plugin/log.write": trappable,
    },
});

unchanged_in_every_line!();

fn capabilities(flags: types::Capabilities) -> Exports {
    let pairs = [
        (types::Capabilities::PROVIDE, Exports::PROVIDE),
        (types::Capabilities::CALL_TOOL, Exports::CALL_TOOL),
        (types::Capabilities::SESSION_START, Exports::SESSION_START),
        (types::Capabilities::USER_PROMPT_SUBMIT, Exports::USER_PROMPT_SUBMIT),
        (types::Capabilities::PRE_TOOL_USE, Exports::PRE_TOOL_USE),
        (types::Capabilities::POST_TOOL_USE, Exports::POST_TOOL_USE),
        (types::Capabilities::STOP, Exports::STOP),
        (types::Capabilities::COMMAND, Exports::COMMAND),
    ];
    pairs
        .into_iter()
        .filter(|(wit, _)| flags.contains(*wit))
        .fold(Exports::empty(), |all, (_, host)| all | host)
}

pub(super) async fn manifest(
    pre: &PluginPre<CallState>,
    store: &mut Store<CallState>,
) -> wasmtime::Result<Manifest> {
    let instance = pre.instantiate_async(&mut *store).await?;
    let manifest = instance.agent_host_plugin_guest().call_manifest(&mut *store).await?;
    Ok(Manifest {
        name: manifest.name,
        version: manifest.version,
        capabilities: capabilities(manifest.capabilities),
        commands: manifest.commands.into_iter().map(Into::into).collect(),
    })
}

/// A 0.1 `configure` returns the configuration alone: it requires nothing.
pub(super) async fn configure(
    store: &mut Store<CallState>,
    func: Func,
    config: &str,
) -> wasmtime::Result<Result<Configured, String>> {
    let configured = super::call::<_, Result<String, String>>(store, func, (config,)).await?;
    Ok(configured.map(|config| Configured { config, requires: Vec::new() }))
}

impl agent_host::plugin::events::Host for CallState {
    fn emit(&mut self, kind: String, payload: String) -> wasmtime::Result<()> {
        CallState::emit(self, kind, payload, None)
    }
}

impl agent_host::plugin::process::Host for CallState {
    async fn run(
        &mut self,
        request: agent_host::plugin::process::RunRequest,
    ) -> Result<agent_host::plugin::process::RunOutput, String> {
        let asked_ms = request.timeout_ms;
        let request = ProcessRequest {
            command: request.command,
            timeout_ms: request.timeout_ms,
            max_output_bytes: request.max_output_bytes,
        };
        let output = self.run_process(request).await?;
        let stderr = stderr_with_cut_note(&output, asked_ms);
        Ok(agent_host::plugin::process::RunOutput {
            status: output.status,
            stdout: output.stdout,
            stderr,
            timed_out: output.timed_out,
            truncated: output.truncated,
        })
    }
}

/// The line a 0.1 plugin finds at the end of stderr when the call's deadline cut the time it
/// asked for; its start is what such a plugin looks for to report the time the command
/// really had.
const CUT_NOTE_PREFIX: &str = "agent-host: timeout_ms cut to ";

/// The process's stderr, with the cut note added when the cut mattered: a command that
/// ended in time was not cut short.
fn stderr_with_cut_note(output: &ProcessOutput, asked_ms: u64) -> String {
    let mut stderr = output.stderr.clone();
    if let Some(given_ms) = output.timeout_cut_to_ms.filter(|_| output.timed_out) {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&format!(
            "{CUT_NOTE_PREFIX}{given_ms} ms (asked {asked_ms} ms): the plugin call's deadline is \
             {} ms ([plugin.limits] timeout_ms)\n",
            output.deadline_ms
        ));
    }
    stderr
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(stderr: &str, timed_out: bool, cut: Option<u64>) -> ProcessOutput {
        ProcessOutput {
            status: None,
            stdout: String::new(),
            stderr: stderr.into(),
            timed_out,
            truncated: false,
            timeout_cut_to_ms: cut,
            deadline_ms: 2000,
        }
    }

    #[test]
    fn a_cut_that_mattered_is_noted_on_its_own_line() {
        assert_eq!(
            stderr_with_cut_note(&output("partial", true, Some(1700)), 60_000),
            "partial\nagent-host: timeout_ms cut to 1700 ms (asked 60000 ms): the plugin call's \
             deadline is 2000 ms ([plugin.limits] timeout_ms)\n"
        );
    }

    #[test]
    fn no_note_when_the_command_ended_in_time_or_was_not_cut() {
        assert_eq!(stderr_with_cut_note(&output("ok", false, Some(1700)), 60_000), "ok");
        assert_eq!(stderr_with_cut_note(&output("slow", true, None), 1000), "slow");
    }

    #[test]
    fn a_0_1_plugin_has_no_status_capability() {
        let all = types::Capabilities::all();
        let host = capabilities(all);
        assert!(host.contains(Exports::PROVIDE | Exports::COMMAND | Exports::STOP));
        assert!(!host.contains(Exports::STATUS));
        assert_eq!(capabilities(types::Capabilities::empty()), Exports::empty());
    }
}
