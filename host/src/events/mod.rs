//! The event stream: everything a front end renders, in one documented type.
//!
//! `--json` writes each event as one JSON line, `{"type": "...", ...}`; the console renders
//! the same events as text. A plugin's own events arrive as [`Event::Plugin`] with the
//! plugin's payload and, when it gives one, its display form. The stream's JSON Schema is
//! generated from these types ([`schema`]) and committed as `docs/events.schema.json`.
//!
//! This module sits below the agent and the runtime: events are built from plain fields.

mod agent_state;
mod context;
mod edit;
mod outcomes;
mod payload;
mod reply;
pub mod schema;
mod sinks;
pub(crate) mod view;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::conversation::Role;
pub use agent_state::AgentState;
pub use context::{ContextEstimate, CountedBy};
pub use edit::FileEdit;
pub use outcomes::{ApprovalAnswer, CallDecision, ReviewOutcome, TurnEnd};
pub use payload::Payload;
pub use reply::{ReplyStop, TokenUsage, thousands};
pub use sinks::{BuildProgressOnStderr, CollectEvents, EventSink, NoEvents};
#[cfg(any(test, feature = "testing"))]
pub use view::stages;
pub use view::{ChecklistEntry, ChoiceCategory, ChoiceOption, EntryState, PluginView, Widget};

/// One thing that happened. Serialized with a `type` tag in snake_case.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
// Only deserializing would reject unknown fields; the schema's consumers reject them too.
#[schemars(deny_unknown_fields)]
pub enum Event {
    /// A session is ready: new (`resumed: false`) or loaded from the store.
    SessionStarted {
        /// The session's id; `--session <id>` resumes it.
        session_id: String,
        /// Whether the session was loaded from the store rather than created.
        resumed: bool,
    },
    /// The operator's prompt, as stored.
    UserMessage {
        /// The prompt text.
        text: String,
    },
    /// A message a plugin added to the next model call only (not stored in the history).
    InjectedMessage {
        /// The plugin that added it (its name).
        plugin: String,
        /// The message's role: `system` or `user`.
        role: Role,
        /// The message text.
        content: String,
    },
    /// A model call is about to be made.
    ModelRequest {
        /// Which model call of the turn this is, counting from 1.
        iteration: u32,
        /// How many tools the call offers.
        tools: usize,
        /// How many messages the call sends, the system prompt and injected messages included.
        messages: usize,
        /// The call's estimated size against the model's context window.
        context: ContextEstimate,
    },
    /// A piece of the model's reply text, as it streams.
    AssistantDelta {
        /// The new text.
        text: String,
    },
    /// The model's complete reply, or what arrived of one that broke off.
    AssistantMessage {
        /// The reply text (may be empty when the reply only calls tools).
        text: String,
        /// The tool calls the reply asks for, in order.
        tool_calls: Vec<ToolCallEvent>,
        /// Why the reply ended; with `length` its tool calls are not run.
        stop: ReplyStop,
        /// The tokens the call used, when the endpoint said.
        // Left out, never `null`, when there is none.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "TokenUsage")]
        usage: Option<TokenUsage>,
        /// What the model showed of its reasoning, apart from the text: never stored in the
        /// history nor sent back.
        // Left out, never `null`, when there is none.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "String")]
        reasoning: Option<String>,
    },
    /// A tool call the hooks decided on: about to run; or, `refused`, refused (its
    /// `tool_decision` `deny` follows), so that every front end shows what was refused.
    ToolCall {
        /// The call's id, unique in the session.
        id: String,
        /// The tool's name.
        name: String,
        /// Who runs the tool: the plugin's name, or `mcp:<server>` for an MCP server's tool.
        plugin: String,
        /// The arguments the tool receives (or would have), parsed, as the hooks left them.
        arguments: Value,
        /// The call was refused and does not run; left out when it runs.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        refused: bool,
    },
    /// A hook or the operator refused a call, or the operator (or `agent.on_ask`) allowed
    /// one a hook asked about.
    ToolDecision {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// What was decided.
        decision: CallDecision,
        /// Why: the refusing or asking hook's reason, or the operator's.
        reason: String,
        /// Who decided: a plugin's label (`name@version`) or `operator`.
        decided_by: String,
    },
    /// A plugin's `review` (contract 0.2.7) judged a call a hook asked about,
    /// before the operator would be asked: the audit of every review, with the call.
    ToolReviewed {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// Who runs the tool: the plugin's name, or `mcp:<server>` for an MCP server's tool.
        plugin: String,
        /// The arguments the tool would receive, parsed.
        arguments: Value,
        /// The reviewing plugin's label (`name@version`).
        reviewed_by: String,
        verdict: ReviewOutcome,
        /// The denial's reason, or what failed; absent for `allow` and `abstain`.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// An `ask` verdict is put to the operator (or to `agent.on_ask` when nobody can answer).
    ApprovalRequested {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// Who runs the tool: the plugin's name, or `mcp:<server>` for an MCP server's tool.
        plugin: String,
        /// The arguments the tool would receive, parsed.
        arguments: Value,
        /// Why the hook asked.
        reason: String,
        /// The asking hook's label (`name@version`).
        asked_by: String,
    },
    /// The answer to an approval request: `answer`, and with `deny` the operator's reason
    /// if one was given.
    ApprovalAnswered {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        #[serde(flatten)]
        answer: ApprovalAnswer,
    },
    /// A file a tool call changed, for front ends to show as a diff (contract 0.2.5); sent
    /// after the call ran, before its `tool_result`. The model never sees it.
    FileEdited {
        /// The call's id.
        id: String,
        #[serde(flatten)]
        edit: FileEdit,
    },
    /// A tool call's result as the model will see it.
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// Whether the call succeeded (a refused or failed call is `false`).
        ok: bool,
        /// The result text the model receives.
        output: String,
    },
    /// A `stop` hook kept the turn going with a message for the model.
    Continued {
        /// The plugin whose `stop` hook continued (its name).
        plugin: String,
        /// The message the model receives as the next user message.
        message: String,
    },
    /// A judge (a plugin's `turn-end`, contract 0.2.7) ended the turn with a reason of its
    /// own; `turn_ended` follows with that reason.
    TurnStopped {
        /// The judging plugin (its name).
        plugin: String,
        /// The reason the turn ends with.
        reason: TurnEnd,
        /// The plugin's line for the operator.
        message: String,
    },
    /// A continuation a plugin asked for was not run: the operator's input was waiting, and
    /// comes first.
    ContinuationPreempted {
        /// The plugin whose continuation gave way (its name).
        plugin: String,
    },
    /// After an operator command, a plugin queued a turn (a loop set or resumed), which
    /// the front end runs at once with `prompt`.
    TurnQueued {
        /// The queuing plugin (its name).
        plugin: String,
        prompt: String,
    },
    /// A `user-prompt-submit` hook refused the prompt.
    PromptBlocked {
        /// The refusing plugin (its name).
        plugin: String,
        /// Its reason.
        reason: String,
    },
    /// A plugin's own event.
    Plugin {
        /// The emitting plugin (its name).
        plugin: String,
        /// The event's kind, chosen by the plugin.
        kind: String,
        /// The event's data.
        payload: Payload,
        /// The plugin's own human-readable form of the event, possibly several lines; the
        /// console shows it (escaped) and nothing when it is absent.
        // Left out, never `null`, when there is none.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "String")]
        display: Option<String>,
    },
    /// What a plugin shows changed (its `viewer` export, contract 0.2.4): the whole view,
    /// every widget, or the error its `view` call ended with in their place. Sent when a
    /// session is opened, and after a call or a reload changed what the plugin shows.
    ViewChanged {
        #[serde(flatten)]
        view: PluginView,
    },
    /// Something went wrong; the session carries on unless the turn ended.
    Error {
        /// What went wrong.
        message: String,
        /// The plugin at fault (its label, `name@version`, or its name), when one was.
        // Left out, never `null`, when there is none.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "String")]
        plugin: Option<String>,
    },
    /// The turn is over.
    TurnEnded {
        /// How it ended.
        reason: TurnEnd,
        /// How many model calls the turn made (its last `model_request`'s `iteration`).
        iterations: u32,
        /// Tokens the turn spent: the input and output of its model calls (as the endpoint
        /// reported them, or as estimated where it reported none: see `estimated`) and of its
        /// plugins' `model.complete` calls.
        #[serde(default)]
        tokens: u64,
        /// Milliseconds from the turn's start to its end.
        #[serde(default)]
        ms: u64,
        /// Whether `tokens` holds the host's estimate of a model call whose endpoint reported
        /// no usage (its request as counted before it was sent, its reply as counted); absent
        /// when every call's usage was reported.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        estimated: bool,
    },
    /// A crate-folder plugin is being built: one step of cargo's progress.
    PluginBuilding {
        /// The crate folder, as configured.
        path: String,
        /// One line of cargo's progress, such as `Compiling notes v0.1.0 (...)`.
        progress: String,
    },
    /// A plugin asked the deployment's model (`model.complete`) and it answered.
    PluginModelCall {
        /// The asking plugin (its name).
        plugin: String,
        /// Tokens of the request, as the endpoint counted them (0 when it did not say).
        input_tokens: u64,
        /// Tokens of the reply, as the endpoint counted them (0 when it did not say).
        output_tokens: u64,
        /// Milliseconds the call took.
        ms: u64,
    },
    /// The history sent to the model was compacted (the store keeps every message).
    Compacted {
        /// Why: `threshold` (the estimate passed the trigger), `requested` (`/compact`),
        /// `context_too_long` (the endpoint refused the request).
        reason: String,
        /// Who compacted: the compacting plugin's name, or `truncate` for the host's own.
        strategy: String,
        /// What it did (the plugin's note), or why the host truncated instead.
        note: String,
        /// Set when a plugin's compaction was not used: what was wrong with it.
        #[serde(skip_serializing_if = "Option::is_none")]
        fallback: Option<String>,
        /// The history's estimated tokens before and after.
        tokens_before: u64,
        tokens_after: u64,
        /// Messages sent before that were replaced, and the new messages in their place.
        replaced: u64,
        summaries: u64,
    },
    /// A compaction was due but a plugin's `pre-compact` hook vetoed it.
    CompactionVetoed {
        /// The vetoing plugin (its name).
        plugin: String,
        /// Why, in its words.
        reason: String,
    },
    /// A plugin was loaded or reloaded.
    PluginLoaded {
        /// The plugin's label, `name@version`.
        plugin: String,
        /// The component file it was loaded from.
        path: String,
        /// The component's content hash.
        hash: String,
        /// Whether the compiled code came from the compile cache.
        cached: bool,
    },
    /// A new version of a plugin (or of `config.toml`) was refused; the old one keeps serving.
    PluginRejected {
        /// The file that was refused.
        path: String,
        /// Why.
        error: String,
    },
    /// An MCP server (`[[mcp]]`) was started and listed its tools.
    McpServerStarted {
        /// The server's name.
        server: String,
        /// `stdio` (a program the host started) or `http` (streamable HTTP).
        transport: String,
        /// The tools offered, as the model sees them (`mcp__<server>__<tool>`).
        tools: Vec<String>,
        /// From the start to the tools listed, in milliseconds.
        startup_ms: u64,
        /// The tools left out, each with why (a name the model APIs refuse, a bad schema).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_errors: Vec<String>,
    },
    /// An MCP server could not be started; its tools are not offered.
    McpServerFailed {
        /// The server's name.
        server: String,
        /// Why.
        error: String,
    },
    /// A child agent (contract 0.2.8) of this session starts a turn: its own session, whose
    /// events follow as `subagent` events until its `subagent_ended`.
    SubagentStarted {
        /// The child's session id.
        session_id: String,
        /// The session that started it.
        parent_id: String,
        /// The tool call that started it, when one did.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "String")]
        call_id: Option<String>,
        /// Its agent name (`explore`).
        agent: String,
        /// The prompt its turn starts with (empty when it goes on with a turn a crash cut
        /// short).
        prompt: String,
    },
    /// One event of a child agent's turn, as its own session's stream has it.
    Subagent {
        /// The child's session id.
        session_id: String,
        /// The session that started it.
        parent_id: String,
        /// Its agent name.
        agent: String,
        /// The child's event.
        event: Box<Event>,
    },
    /// A child agent's turn is over.
    SubagentEnded {
        /// The child's session id.
        session_id: String,
        /// The session that started it.
        parent_id: String,
        /// Its agent name.
        agent: String,
        /// `done`, `failed` or `cancelled`.
        state: AgentState,
        /// Its final reply once done; the error once failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "String")]
        answer: Option<String>,
        /// Tokens its turn spent, which count in its parent's turn.
        tokens: u64,
    },
}

/// A tool call as shown in [`Event::AssistantMessage`].
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ToolCallEvent {
    /// The call's id, unique in the session.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the JSON text the model wrote.
    pub arguments: String,
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    fn plugin_event(display: Option<&str>) -> Event {
        let text = r#"{"to":"done","from":"open"}"#;
        let payload = Payload::from(RawValue::from_string(text.to_owned()).unwrap());
        Event::Plugin {
            plugin: "lists".into(),
            kind: "moved".into(),
            payload,
            display: display.map(Into::into),
        }
    }

    #[test]
    fn a_plugin_payload_goes_out_as_the_plugin_wrote_it_and_parses_on_demand() {
        let event = plugin_event(None);
        let line = serde_json::to_string(&event).unwrap();
        assert_eq!(
            line,
            r#"{"type":"plugin","plugin":"lists","kind":"moved","payload":{"to":"done","from":"open"}}"#
        );
        let Event::Plugin { payload, .. } = &event else { unreachable!() };
        assert_eq!(payload.value(), serde_json::json!({"from": "open", "to": "done"}));
        assert_eq!(payload.clone(), *payload);
    }

    #[test]
    fn a_display_form_is_written_only_when_the_plugin_gave_one() {
        let line = serde_json::to_value(plugin_event(Some("open → done\n  1 item"))).unwrap();
        assert_eq!(line["display"], "open → done\n  1 item");
    }

    #[test]
    fn typed_fields_keep_their_snake_case_wire_names() {
        let wire = |event: Event| serde_json::to_value(event).unwrap();
        let answered = |answer| Event::ApprovalAnswered { id: "c1".into(), name: "run".into(), answer };
        assert_eq!(
            wire(answered(ApprovalAnswer::AllowToolAlways)),
            serde_json::json!({"type": "approval_answered", "id": "c1", "name": "run", "answer": "allow_tool_always"})
        );
        assert_eq!(
            wire(answered(ApprovalAnswer::Deny { reason: Some("not today".into()) })),
            serde_json::json!({"type": "approval_answered", "id": "c1", "name": "run", "answer": "deny", "reason": "not today"})
        );
        assert_eq!(
            wire(answered(ApprovalAnswer::Deny { reason: None })),
            serde_json::json!({"type": "approval_answered", "id": "c1", "name": "run", "answer": "deny"})
        );
        let ended = wire(Event::TurnEnded {
            reason: TurnEnd::TokenBudget,
            iterations: 3,
            tokens: 1_200,
            ms: 850,
            estimated: false,
        });
        assert_eq!(
            ended,
            serde_json::json!({"type": "turn_ended", "reason": "token_budget", "iterations": 3, "tokens": 1200, "ms": 850})
        );
        let estimated = wire(Event::TurnEnded {
            reason: TurnEnd::Done,
            iterations: 1,
            tokens: 2_400,
            ms: 5,
            estimated: true,
        });
        assert_eq!(estimated["estimated"], true);
        let decided = wire(Event::ToolDecision {
            id: "c1".into(),
            name: "run".into(),
            decision: CallDecision::AllowByDefault,
            reason: "r".into(),
            decided_by: "operator".into(),
        });
        assert_eq!(decided["decision"], "allow_by_default");
        let injected =
            wire(Event::InjectedMessage { plugin: "notes".into(), role: Role::System, content: "c".into() });
        assert_eq!(injected["role"], "system");
    }
}
