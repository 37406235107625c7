//! The spans a trace holds, named and attributed as the OpenTelemetry GenAI semantic
//! conventions say (`invoke_agent`, `chat {model}`, `execute_tool {tool}`), and the plugin
//! calls under this project's own namespace (`agent_host.plugin.*`). Every span of the host's
//! is made here, so their names and attributes have one home.

use std::sync::atomic::{AtomicBool, Ordering};

use tracing::Span;
use tracing::field::Empty;

/// The target of every span here: what the exporting layer takes, and nothing else does.
pub const TARGET: &str = "agent_host::telemetry";

/// What the agent is called in its spans.
const AGENT: &str = "agent-host";

/// Whether spans carry what was said (`[telemetry] capture_content`): set once, at start.
static CAPTURE_CONTENT: AtomicBool = AtomicBool::new(false);

/// Makes spans carry what was said from now on, or not.
pub fn capture_content(capture: bool) {
    CAPTURE_CONTENT.store(capture, Ordering::Relaxed);
}

fn capturing() -> bool {
    CAPTURE_CONTENT.load(Ordering::Relaxed)
}

/// One user turn of session `session_id`.
pub fn invoke_agent(session_id: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "invoke_agent",
        otel.name = "invoke_agent agent-host",
        otel.kind = "internal",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = AGENT,
        gen_ai.conversation.id = session_id,
        agent_host.turn.end = Empty,
    )
}

/// How the turn ended (`done`, `cancelled`, ...), on its [`invoke_agent`] span.
pub fn turn_ended(span: &Span, end: &str) {
    span.record("agent_host.turn.end", end);
}

/// One model call to `model`.
pub fn chat(model: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "chat",
        otel.name = format!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.request.model = model,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.output.messages = Empty,
        error.type = Empty,
    )
}

/// What a model call came to, on its [`chat`] span: the tokens the endpoint counted, when it
/// said, and why the reply ended (the endpoint's reason as the host names it).
pub fn chat_replied(span: &Span, usage: Option<(u64, u64)>, finish_reason: &str) {
    if let Some((input, output)) = usage {
        span.record("gen_ai.usage.input_tokens", input);
        span.record("gen_ai.usage.output_tokens", output);
    }
    span.record("gen_ai.response.finish_reasons", finish_reason);
}

/// The reply's text, on its [`chat`] span, when the operator opted in to content.
pub fn chat_said(span: &Span, text: &str) {
    if capturing() {
        span.record("gen_ai.output.messages", text);
    }
}

/// A call that failed, on its span: what kind of failure.
pub fn failed(span: &Span, error_type: &str) {
    span.record("error.type", error_type);
}

/// One tool call.
pub fn execute_tool(tool: &str, call_id: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = format!("execute_tool {tool}"),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        agent_host.tool.ok = Empty,
        error.type = Empty,
    )
}

/// Whether the tool call succeeded, on its [`execute_tool`] span; with its arguments and
/// result when the operator opted in to content.
pub fn tool_finished(span: &Span, ok: bool, arguments: &str, result: &str) {
    span.record("agent_host.tool.ok", ok);
    if capturing() {
        span.record("gen_ai.tool.call.arguments", arguments);
        span.record("gen_ai.tool.call.result", result);
    }
}

/// One call of a plugin's export.
pub fn plugin_call(plugin: &str, export: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "plugin_call",
        otel.name = format!("plugin {plugin} {export}"),
        otel.kind = "internal",
        agent_host.plugin.name = plugin,
        agent_host.plugin.export = export,
        agent_host.plugin.outcome = Empty,
    )
}

/// How a plugin call ended (`ok`, or the failure's kind), on its [`plugin_call`] span.
pub fn plugin_returned(span: &Span, outcome: &str) {
    span.record("agent_host.plugin.outcome", outcome);
}
