//! Contract line 0.2 (`wit/plugin.wit`, 0.2.11), the current one. Components built against
//! 0.2.0 to 0.2.10 link against it unchanged: they import no `tools` (0.2.0), no `model`
//! (before 0.2.2), no `edits` (before 0.2.5), no `meter` (before 0.2.6) or only its `read`
//! (0.2.6), no `history` (before 0.2.7) and no `agents` (before 0.2.8), and export no `compactor` (before 0.2.3), no `viewer` (before 0.2.4) and no
//! `judge` (before 0.2.7). So only the `guest` interface is type-checked as a whole; the
//! optional exports are found by name (`compactor.rs`, `viewer.rs`, `judge.rs`) and each
//! checked when it is called.

use wasmtime::component::{Func, InstancePre, Linker};
use wasmtime::{Engine, Store};

use self::agent_host::plugin::types;
use super::super::types::{Configured, Exports, Manifest, Requirement};
use crate::runtime::CallState;
use crate::runtime::host_api::{ChatMessage, ChatRole, ProcessRequest};

mod agents;
mod compactor;
mod judge;
mod viewer;
pub(super) use compactor::{compact, post_compact, pre_compact, spec};
pub(super) use judge::{judge_spec, queued, review, turn_end};
pub(super) use viewer::view;

wasmtime::component::bindgen!({
    world: "judging-plugin",
    path: "../wit",
    // Calls run on the caller's async task (a fiber per call): WASI I/O stays async and no
    // call hops threads. The host's own imports are quick and stay synchronous, except
    // running a process and asking the model, which wait without blocking the thread.
    // The imports through which a plugin makes the host hold data may trap: a call over
    // one of its host-side caps ends there (see `runtime/caps.rs`).
    exports: { default: async },
    imports: {
        "agent-host:plugin/process.run": async,
        "agent-host:plugin/model.complete": async,
        "agent-host:plugin/state.set": trappable,
        "agent-host:plugin/events.emit": trappable,
        "agent-host:plugin/log.write": trappable,
        "agent-host:plugin/tools.declare": trappable,
    },
});

/// The world's imports are `plugin`'s: what `unchanged_in_every_line!` links.
use JudgingPlugin as Plugin;

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
        (types::Capabilities::STATUS, Exports::STATUS),
    ];
    pairs
        .into_iter()
        .filter(|(wit, _)| flags.contains(*wit))
        .fold(Exports::empty(), |all, (_, host)| all | host)
}

/// A component linked against this line, with its `guest` interface's exports found.
pub struct Pre {
    instance_pre: InstancePre<CallState>,
    guest: exports::agent_host::plugin::guest::GuestIndices,
}

impl Pre {
    pub fn new(instance_pre: InstancePre<CallState>) -> wasmtime::Result<Self> {
        let guest = exports::agent_host::plugin::guest::GuestIndices::new(&instance_pre)?;
        Ok(Self { instance_pre, guest })
    }

    pub fn instance_pre(&self) -> &InstancePre<CallState> {
        &self.instance_pre
    }

    pub fn engine(&self) -> &Engine {
        self.instance_pre.engine()
    }
}

/// `manifest`, after type-checking every export of the `guest` interface.
pub(super) async fn manifest(pre: &Pre, store: &mut Store<CallState>) -> wasmtime::Result<Manifest> {
    let instance = pre.instance_pre.instantiate_async(&mut *store).await?;
    let guest = pre.guest.load(&mut *store, &instance)?;
    let manifest = guest.call_manifest(&mut *store).await?;
    Ok(Manifest {
        name: manifest.name,
        version: manifest.version,
        capabilities: capabilities(manifest.capabilities),
        commands: manifest.commands.into_iter().map(Into::into).collect(),
    })
}

pub(super) async fn configure(
    store: &mut Store<CallState>,
    func: Func,
    config: &str,
) -> wasmtime::Result<Result<Configured, String>> {
    let configured = super::call::<_, Result<types::Configured, String>>(store, func, (config,)).await?;
    Ok(configured.map(|configured| Configured {
        config: configured.config,
        requires: configured.requires.into_iter().map(requirement).collect(),
    }))
}

fn requirement(requirement: types::Requirement) -> Requirement {
    match requirement {
        types::Requirement::ReadsState(name) => Requirement::ReadsState(name),
        types::Requirement::RunsProcesses => Requirement::RunsProcesses,
        types::Requirement::Network => Requirement::Network,
    }
}

pub(super) async fn status(
    store: &mut Store<CallState>,
    func: Func,
    ctx: &host::CallContext,
    config: &str,
) -> wasmtime::Result<Option<String>> {
    let ctx = call_context(ctx, config);
    super::call(store, func, (&ctx,)).await
}

impl agent_host::plugin::events::Host for CallState {
    fn emit(&mut self, kind: String, payload: String, display: Option<String>) -> wasmtime::Result<()> {
        CallState::emit(self, kind, payload, display)
    }
}

impl agent_host::plugin::edits::Host for CallState {
    fn report(&mut self, edit: agent_host::plugin::edits::FileEdit) {
        self.report_edit(edit.path, edit.before, edit.after);
    }
}

impl agent_host::plugin::meter::Host for CallState {
    fn read(&mut self) -> agent_host::plugin::meter::Reading {
        let meter = self.meter;
        agent_host::plugin::meter::Reading {
            turn_tokens: meter.turn_tokens,
            turn_model_calls: meter.turn_model_calls,
            turn_ms: meter.turn_ms,
            turn_continuations: meter.turn_continuations,
            caps: agent_host::plugin::meter::Caps {
                max_iterations: meter.max_iterations,
                max_turn_tokens: meter.max_turn_tokens,
                max_turn_secs: meter.max_turn_secs,
                max_continuations: meter.max_continuations,
            },
        }
    }

    fn session(&mut self) -> agent_host::plugin::meter::SessionReading {
        agent_host::plugin::meter::SessionReading {
            tokens: self.meter.session_tokens,
            model_calls: self.meter.session_model_calls,
        }
    }
}

impl agent_host::plugin::history::Host for CallState {
    fn result_of(&mut self, call_id: String) -> Option<u64> {
        self.results.as_ref().and_then(|results| results.of(&call_id))
    }
}

impl agent_host::plugin::tools::Host for CallState {
    fn declare(&mut self, tool: types::ToolSpec) -> wasmtime::Result<()> {
        self.declare_tool(tool.into())
    }
}

impl agent_host::plugin::process::Host for CallState {
    async fn run(
        &mut self,
        request: agent_host::plugin::process::RunRequest,
    ) -> Result<agent_host::plugin::process::RunOutput, String> {
        let request = ProcessRequest {
            command: request.command,
            timeout_ms: request.timeout_ms,
            max_output_bytes: request.max_output_bytes,
        };
        let output = self.run_process(request).await?;
        Ok(agent_host::plugin::process::RunOutput {
            status: output.status,
            stdout: output.stdout,
            stderr: output.stderr,
            timed_out: output.timed_out,
            truncated: output.truncated,
            timeout_cut_to_ms: output.timeout_cut_to_ms,
        })
    }
}

impl agent_host::plugin::model::Host for CallState {
    async fn complete(
        &mut self,
        messages: Vec<agent_host::plugin::model::ChatMessage>,
        options: agent_host::plugin::model::CompleteOptions,
    ) -> Result<agent_host::plugin::model::Completion, String> {
        use self::agent_host::plugin::model::ChatRole as Wit;
        let messages = messages
            .into_iter()
            .map(|message| ChatMessage {
                role: match message.role {
                    Wit::System => ChatRole::System,
                    Wit::User => ChatRole::User,
                    Wit::Assistant => ChatRole::Assistant,
                },
                content: message.content,
            })
            .collect();
        let completion = CallState::complete(self, messages, options.max_output_tokens).await?;
        Ok(agent_host::plugin::model::Completion {
            text: completion.text,
            input_tokens: completion.input_tokens,
            output_tokens: completion.output_tokens,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_maps_to_its_own_capability() {
        assert_eq!(capabilities(types::Capabilities::STATUS), Exports::STATUS);
        assert_eq!(capabilities(types::Capabilities::CALL_TOOL), Exports::CALL_TOOL);
        let two = capabilities(types::Capabilities::PROVIDE | types::Capabilities::STOP);
        assert_eq!(two, Exports::PROVIDE | Exports::STOP);
    }
}
