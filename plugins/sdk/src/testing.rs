//! Native stand-ins for the host, for plugins' unit tests (`cargo test` on the build
//! machine, not in a component). Each test thread has its own session: a state bag, the
//! other plugins' namespaces it may read, and a record of events, logs, reuse and hook
//! filter declarations, and the children it started ([`take_agent_calls`]). [`Harness`]
//! drives a [`Plugin`] through its exports as the host would; [`History`] and [`budget`]
//! build what its compaction hooks are called with.

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Plugin;
pub use crate::bindings::agent_host::plugin::edits::FileEdit;
use crate::bindings::agent_host::plugin::types::{
    CallContext, Contribution, PostToolOutcome, PreToolOutcome, Requirement, StopOutcome, ToolCall,
    ToolResult, ToolSpec, ToolUse,
};
use crate::compaction::{
    Compacted, Compaction, CompactionBudget, CompactorSpec, HistoryMessage, PreCompactOutcome,
};
use crate::hook_filter::{ToolFilter, ToolHook};
use crate::model::{ChatMessage, CompleteOptions, Completion};
use crate::process::{RunOutput, RunRequest};

mod agents;
mod history;

pub use agents::{AgentCall, AgentStartStandIn, finish_agent, on_agent_start, take_agent_calls};
pub use history::{History, budget};

/// An event a call emitted.
#[derive(Debug, Clone, PartialEq)]
pub struct Emitted {
    pub kind: String,
    pub payload: Value,
    pub display: Option<String>,
}

/// A hook filter declaration made in `configure`, compared as a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// `hook_filter::only`: the hook sees only the calls the filter lets through.
    Only(ToolHook, ToolFilter),
    /// `hook_filter::never`: the hook is never called.
    Never(ToolHook),
}

/// What answers `process::run`.
pub type ProcessStandIn = fn(&RunRequest) -> Result<RunOutput, String>;

/// What answers `model::complete`.
pub type ModelStandIn = fn(&[ChatMessage], &CompleteOptions) -> Result<Completion, String>;

#[derive(Default)]
struct Session {
    own: BTreeMap<String, String>,
    foreign: BTreeMap<(String, String), String>,
    events: Vec<Emitted>,
    edits: Vec<FileEdit>,
    logs: Vec<String>,
    reusable: bool,
    filters: Vec<Filter>,
    declared: Vec<ToolSpec>,
    process: Option<ProcessStandIn>,
    model: Option<ModelStandIn>,
    asked: Vec<(Vec<ChatMessage>, CompleteOptions)>,
    meter: Option<crate::meter::Reading>,
    session_meter: Option<crate::meter::SessionReading>,
    results: BTreeMap<String, u64>,
    agents: agents::Children,
}

thread_local! {
    static SESSION: RefCell<Session> = RefCell::new(Session::default());
}

fn with<T>(f: impl FnOnce(&mut Session) -> T) -> T {
    SESSION.with(|session| f(&mut session.borrow_mut()))
}

/// Starts this thread's session afresh.
pub fn reset() {
    with(|session| *session = Session::default());
}

/// The value stored under `key` in the plugin's own namespace.
pub fn stored(key: &str) -> Option<Value> {
    with(|session| session.own.get(key).map(|json| serde_json::from_str(json).expect("stored JSON")))
}

/// Stores `value` under `key` in the plugin's own namespace, as an earlier call would have.
pub fn store(key: &str, value: Value) {
    with(|session| session.own.insert(key.to_owned(), value.to_string()));
}

/// Stores `value` under `key` in another plugin's namespace, readable through `state::read`.
pub fn store_foreign(namespace: &str, key: &str, value: Value) {
    with(|session| session.foreign.insert((namespace.to_owned(), key.to_owned()), value.to_string()));
}

/// The events emitted since the last call of this function (or the reset).
pub fn take_events() -> Vec<Emitted> {
    with(|session| std::mem::take(&mut session.events))
}

/// The file edits reported since the last call of this function (or the reset).
pub fn take_edits() -> Vec<FileEdit> {
    with(|session| std::mem::take(&mut session.edits))
}

/// The log lines written since the reset, as `LEVEL message`.
pub fn logs() -> Vec<String> {
    with(|session| session.logs.clone())
}

/// Whether a call since the last look declared its contribution reusable; clears the flag.
pub fn take_reusable() -> bool {
    with(|session| std::mem::take(&mut session.reusable))
}

/// The hook filter declarations made since the reset, in order.
pub fn filters() -> Vec<Filter> {
    with(|session| session.filters.clone())
}

/// The tools declared since the reset, in order.
pub fn declared() -> Vec<ToolSpec> {
    with(|session| session.declared.clone())
}

/// Answers `model::complete` with `answer` from now on (without it, calls fail).
pub fn on_model(answer: ModelStandIn) {
    with(|session| session.model = Some(answer));
}

/// Sets what `meter::read` answers (until the reset); unset, it reads as outside a turn with
/// the host's default caps.
pub fn set_meter(reading: crate::meter::Reading) {
    with(|session| session.meter = Some(reading));
}

/// Sets where the result of the call `call_id` stands in the history, for
/// `history::result_of` (until the reset).
pub fn set_result_position(call_id: &str, position: u64) {
    with(|session| session.results.insert(call_id.to_owned(), position));
}

/// Sets what `meter::session` answers (until the reset); unset, every count is zero.
pub fn set_session_meter(reading: crate::meter::SessionReading) {
    with(|session| session.session_meter = Some(reading));
}

/// The requests `model::complete` was given since the last take, in order.
pub fn take_model_requests() -> Vec<(Vec<ChatMessage>, CompleteOptions)> {
    with(|session| std::mem::take(&mut session.asked))
}

/// Answers `process::run` with `run` from now on (without it, runs fail).
pub fn on_process(run: ProcessStandIn) {
    with(|session| session.process = Some(run));
}

/// A plugin configured as the host would configure it, with calls made as the host makes
/// them, in this thread's session.
pub struct Harness<C> {
    plugin: Plugin<C>,
    config: String,
    requires: Vec<Requirement>,
    /// The tools `configure` declared.
    declared: Vec<ToolSpec>,
    /// The session's model-call count the next call sees.
    pub model_calls: u64,
    /// The turn's model-call count the next call sees: 0, as for an operator's command or a
    /// direct call, or the round trip's number, as for the calls of a model's reply.
    pub turn_iteration: u32,
}

/// Runs `call`, keeping the plugin's state writes only when `keep` says of its value, as the
/// host keeps a tool's or a command's only when it succeeds.
fn kept_when<T>(keep: fn(&T) -> bool, call: impl FnOnce() -> T) -> T {
    let before = with(|session| session.own.clone());
    let value = call();
    if !keep(&value) {
        with(|session| session.own = before);
    }
    value
}

/// Runs `call` and drops its state writes and events, as the host does for `status` and
/// `view`: asking what a plugin shows changes nothing.
fn dropping_effects<T>(call: impl FnOnce() -> T) -> T {
    let before = with(|session| (session.own.clone(), session.events.len()));
    let value = call();
    with(|session| {
        session.own = before.0;
        session.events.truncate(before.1);
    });
    value
}

impl<C: DeserializeOwned + Serialize + 'static> Harness<C> {
    /// Resets the session and configures `plugin` with `config` (the `[plugin.config]` table).
    pub fn new(plugin: Plugin<C>, config: Value) -> Result<Self, String> {
        reset();
        let configured = plugin.configure_raw(&config.to_string())?;
        Ok(Self {
            plugin,
            config: configured.config,
            requires: configured.requires,
            declared: declared(),
            model_calls: 0,
            turn_iteration: 0,
        })
    }

    /// The configuration every call sees, as JSON.
    pub fn config(&self) -> Value {
        serde_json::from_str(&self.config).expect("configure returns JSON")
    }

    /// What `configure` said this configuration needs.
    pub fn requires(&self) -> &[Requirement] {
        &self.requires
    }

    fn ctx(&self) -> CallContext {
        CallContext {
            session_id: "test-session".to_owned(),
            config: self.config.clone(),
            model_calls: self.model_calls,
            turn_iteration: self.turn_iteration,
        }
    }

    /// What the host offers before a model call: the declared tools, then the
    /// contribution of `provide`, whose own tools follow them.
    pub fn provide(&self) -> Contribution {
        let mut contribution = self.plugin.provide_raw(self.ctx());
        contribution.tools.splice(0..0, self.declared.iter().cloned());
        contribution
    }

    /// The tools `configure` declared.
    pub fn declared(&self) -> &[ToolSpec] {
        &self.declared
    }

    /// A tool call. As in the host, a call that returns an error changes no state.
    pub fn tool(&self, name: &str, arguments: Value) -> Result<String, String> {
        let call =
            ToolCall { id: "call-1".to_owned(), name: name.to_owned(), arguments: arguments.to_string() };
        kept_when(Result::is_ok, || self.plugin.call_tool_raw(self.ctx(), call))
    }

    /// An operator command. As in the host, one that returns an error changes no state.
    pub fn command(&self, name: &str, args: &str) -> Result<String, String> {
        kept_when(Result::is_ok, || self.plugin.command_raw(self.ctx(), name, args))
    }

    pub fn stop(&self) -> StopOutcome {
        self.plugin.stop_raw(self.ctx(), "done")
    }

    /// `status`. As in the host, its state writes and events are dropped.
    pub fn status(&self) -> Option<String> {
        dropping_effects(|| self.plugin.status_raw(self.ctx()))
    }

    /// `turn-end` with the model's final text `reply`.
    pub fn turn_end(&self, reply: &str) -> crate::judge::TurnVerdict {
        self.plugin.turn_end_raw(self.ctx(), reply)
    }

    /// `review` of a call of `tool` (offered by `plugin`) with `arguments`, asked about for
    /// `asked`.
    pub fn review(
        &self,
        plugin: &str,
        tool: &str,
        arguments: Value,
        asked: &str,
    ) -> crate::judge::ReviewVerdict {
        self.plugin.review_raw(self.ctx(), &tool_use(plugin, tool, true, arguments), asked)
    }

    /// `queued`, as after an operator command.
    pub fn queued(&self) -> Option<String> {
        self.plugin.queued_raw(self.ctx())
    }

    /// `shows`, as the host calls it once per load: whether the plugin has a view.
    pub fn shows(&self) -> bool {
        self.plugin.shows_raw(&self.config)
    }

    /// `view`: what front ends would show now. As in the host, its state writes and events
    /// are dropped.
    pub fn view(&self) -> Vec<crate::view::Widget> {
        dropping_effects(|| self.plugin.view_raw(self.ctx()))
    }

    /// `pre-tool-use` for a call of `tool` (offered by `plugin`) with `arguments`.
    pub fn pre_tool_use(&self, plugin: &str, tool: &str, mutates: bool, arguments: Value) -> PreToolOutcome {
        self.plugin.pre_tool_use_raw(self.ctx(), &tool_use(plugin, tool, mutates, arguments))
    }

    /// `spec`, as the host calls it once per load: with the configuration `configure` returned.
    pub fn spec(&self) -> CompactorSpec {
        self.plugin.spec_raw(&self.config)
    }

    /// `compact` of `history` within `budget`.
    pub fn compact(
        &self,
        history: &[HistoryMessage],
        budget: &CompactionBudget,
    ) -> Result<Option<Compaction>, String> {
        self.plugin.compact_raw(self.ctx(), history, budget)
    }

    /// `pre-compact` before a compaction within `budget`.
    pub fn pre_compact(&self, budget: &CompactionBudget) -> PreCompactOutcome {
        self.plugin.pre_compact_raw(self.ctx(), budget)
    }

    /// `post-compact` after the compaction `done` was committed.
    pub fn post_compact(&self, done: &Compacted) {
        self.plugin.post_compact_raw(self.ctx(), done)
    }

    /// `post-tool-use` for a call of `tool` that answered `output`.
    pub fn post_tool_use(&self, plugin: &str, tool: &str, mutates: bool, output: &str) -> PostToolOutcome {
        let result = ToolResult { ok: true, output: output.to_owned() };
        self.plugin.post_tool_use_raw(
            self.ctx(),
            &tool_use(plugin, tool, mutates, Value::Object(Default::default())),
            &result,
        )
    }
}

fn tool_use(plugin: &str, tool: &str, mutates: bool, arguments: Value) -> ToolUse {
    ToolUse {
        call: ToolCall { id: "call-1".to_owned(), name: tool.to_owned(), arguments: arguments.to_string() },
        plugin: plugin.to_owned(),
        mutates,
    }
}

/// The imports' stand-ins, with the generated functions' signatures.
pub(crate) mod fake {
    pub(crate) use super::agents::stand_in as agents;

    pub mod state {
        use super::super::with;

        pub fn get(key: &str) -> Option<String> {
            with(|session| session.own.get(key).cloned())
        }
        pub fn set(key: &str, value: &str) -> Result<(), String> {
            serde_json::from_str::<serde_json::Value>(value).map_err(|error| error.to_string())?;
            with(|session| session.own.insert(key.to_owned(), value.to_owned()));
            Ok(())
        }
        pub fn remove(key: &str) {
            with(|session| session.own.remove(key));
        }
        pub fn read(namespace: &str, key: &str) -> Result<Option<String>, String> {
            Ok(with(|session| session.foreign.get(&(namespace.to_owned(), key.to_owned())).cloned()))
        }
    }

    pub mod events {
        use super::super::{Emitted, with};

        pub fn emit(kind: &str, payload: &str, display: Option<&str>) {
            let payload = serde_json::from_str(payload).expect("an event payload is JSON");
            let event = Emitted { kind: kind.to_owned(), payload, display: display.map(str::to_owned) };
            with(|session| session.events.push(event));
        }
    }

    pub mod edits {
        use super::super::with;
        use crate::bindings::agent_host::plugin::edits::FileEdit;

        pub fn report(edit: &FileEdit) {
            with(|session| session.edits.push(edit.clone()));
        }
    }

    pub mod history {
        use super::super::with;

        pub fn result_of(call_id: &str) -> Option<u64> {
            with(|session| session.results.get(call_id).copied())
        }
    }

    pub mod meter {
        use super::super::with;
        use crate::meter::{Caps, Reading, SessionReading};

        pub fn session() -> SessionReading {
            with(|session| session.session_meter).unwrap_or(SessionReading { tokens: 0, model_calls: 0 })
        }

        pub fn read() -> Reading {
            with(|session| session.meter).unwrap_or(Reading {
                turn_tokens: 0,
                turn_model_calls: 0,
                turn_ms: 0,
                turn_continuations: 0,
                caps: Caps {
                    max_iterations: 10,
                    max_turn_tokens: None,
                    max_turn_secs: None,
                    max_continuations: None,
                },
            })
        }
    }

    pub mod log {
        pub use crate::bindings::agent_host::plugin::log::Level;

        use super::super::with;

        pub fn write(level: Level, message: &str) {
            with(|session| session.logs.push(format!("{level:?} {message}")));
        }
    }

    pub mod reuse {
        use super::super::with;

        pub fn until_state_changes() {
            with(|session| session.reusable = true);
        }
    }

    pub mod hook_filter {
        use super::super::{Filter, with};
        use crate::hook_filter::{ToolFilter, ToolHook};

        pub fn only(hook: ToolHook, filter: &ToolFilter) {
            with(|session| session.filters.push(Filter::Only(hook, filter.clone())));
        }
        pub fn never(hook: ToolHook) {
            with(|session| session.filters.push(Filter::Never(hook)));
        }
    }

    pub mod tools {
        use super::super::with;
        use crate::ToolSpec;

        pub fn declare(tool: &ToolSpec) {
            with(|session| session.declared.push(tool.clone()));
        }
    }

    pub mod model {
        use super::super::with;
        use crate::model::{ChatMessage, CompleteOptions, Completion};

        pub fn complete(messages: &[ChatMessage], options: CompleteOptions) -> Result<Completion, String> {
            let answer = with(|session| {
                session.asked.push((messages.to_vec(), options));
                session.model
            });
            match answer {
                Some(answer) => answer(messages, &options),
                None => Err("no model stand-in: call testing::on_model first".to_owned()),
            }
        }
    }

    pub mod process {
        use super::super::with;
        use crate::process::{RunOutput, RunRequest};

        pub fn run(request: &RunRequest) -> Result<RunOutput, String> {
            match with(|session| session.process) {
                Some(run) => run(request),
                None => Err("no process stand-in: call testing::on_process first".to_owned()),
            }
        }
    }
}
