//! One tool call, start to finish: find the tool, parse and validate the arguments, fold
//! the `pre-tool-use` hooks (asking the operator when one says ask), run the tool, let the
//! `post-tool-use` hooks see or rewrite the result.

use serde_json::Value;

use super::children::ChildOf;
use super::report::{forward_events, heard, report_failure};
use super::snapshot::Snapshot;
use super::turn::prepare::{FreshViews, OfferedTool, Prepared, ToolOwner};
use approval::{ApprovalAnswer, ApprovalRequest, Ask, StandingApprovals};
use review::{Reviewed, review};
use verdict::Verdict;

pub(super) mod approval;
mod review;
pub(super) mod verdict;
use crate::config::OnAsk;
use crate::events::{CallDecision, Event, EventSink};
use crate::plugins::PluginSet;
use crate::plugins::{CallContext, Decision, ProvideMemo, ToolUse};
use crate::state::StateBag;
use crate::telemetry;
use crate::tools::{ToolCall, ToolResult};
use tracing::Instrument as _;

/// Errors from schema validation shown to the model, at most.
const MAX_SCHEMA_ERRORS: usize = 5;

/// What the loop needs to run a tool call.
pub struct ToolCallEnv<'a> {
    /// The round trip's config, plugins and MCP servers.
    pub snapshot: &'a Snapshot,
    pub prepared: &'a Prepared,
    pub ctx: &'a CallContext,
    pub bag: &'a StateBag,
    /// The session's kept contributions, where a tool call's plugin leaves its next one.
    pub memo: &'a ProvideMemo,
    pub sink: &'a dyn EventSink,
    pub approver: &'a dyn super::Approver,
    /// Set when the session is a child agent's: its name for the operator, and the
    /// sessions above it whose hooks decide its calls too.
    pub child: Option<&'a ChildOf>,
}

impl ToolCallEnv<'_> {
    pub(super) fn plugins(&self) -> &PluginSet {
        &self.snapshot.plugins
    }

    /// What an ask nobody can answer comes to (`[agent] on_ask`).
    fn on_ask(&self) -> OnAsk {
        self.snapshot.config.agent.on_ask
    }

    /// What an MCP tool's result is cut to (`[runtime.limits] max_output_kb`); a plugin's
    /// results are cut by its own limits.
    fn mcp_output_bytes(&self) -> usize {
        self.snapshot.config.runtime.limits.max_output_bytes()
    }
}

/// The result for the model, and whether an `ask` went unanswered (which keeps the
/// completion loop from continuing).
pub struct ToolCallReport {
    pub result: ToolResult,
    pub unanswered_ask: bool,
    /// The view the tool's plugin brought with its result (see [`crate::plugins::FreshView`]).
    pub fresh_views: FreshViews,
    /// The call's `execute_tool` span: a child agent it started runs under it.
    pub span: tracing::Span,
}

pub async fn run(env: &ToolCallEnv<'_>, request: &ToolCall) -> ToolCallReport {
    let span = telemetry::execute_tool(&request.name, &request.id);
    let report = async {
        match checked_call(env, request) {
            Err(result) => (result, false, Vec::new()),
            Ok((tool, arguments)) => gate_and_run(env, request, tool, arguments).await,
        }
    }
    .instrument(span.clone())
    .await;
    let (result, unanswered_ask, fresh_views) = report;
    let report = ToolCallReport { result, unanswered_ask, fresh_views, span: span.clone() };
    telemetry::tool_finished(&span, report.result.ok, &request.arguments, &report.result.output);
    env.sink.emit(&Event::ToolResult {
        id: request.id.clone(),
        name: request.name.clone(),
        ok: report.result.ok,
        output: report.result.output.clone(),
    });
    report
}

/// The tool and its parsed, schema-valid arguments; or the error result for the model.
fn checked_call<'p>(
    env: &ToolCallEnv<'p>,
    request: &ToolCall,
) -> Result<(&'p OfferedTool, Value), ToolResult> {
    let Some(tool) = env.prepared.offered.get(&request.name) else {
        let mut names: Vec<&str> = env.prepared.offered.keys().map(String::as_str).collect();
        names.sort_unstable();
        return Err(failure(format!(
            "there is no tool named `{}`; the tools are: {}",
            request.name,
            if names.is_empty() { "(none)".to_owned() } else { names.join(", ") }
        )));
    };
    let arguments: Value = serde_json::from_str(&request.arguments).map_err(|error| {
        failure(format!(
            "the arguments for `{}` are not valid JSON ({error}); send a JSON object",
            request.name
        ))
    })?;
    validate(tool, &request.name, &arguments)?;
    Ok((tool, arguments))
}

fn validate(tool: &OfferedTool, name: &str, arguments: &Value) -> Result<(), ToolResult> {
    let problems: Vec<String> = tool
        .schema
        .validator
        .iter_errors(arguments)
        .take(MAX_SCHEMA_ERRORS)
        .map(|error| {
            let path = error.instance_path().to_string();
            if path.is_empty() { error.to_string() } else { format!("at {path}: {error}") }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(failure(format!("the arguments for `{name}` do not match its schema: {}", problems.join("; "))))
    }
}

/// The `pre-tool-use` hooks, the decision, the tool, the `post-tool-use` hooks: the result,
/// whether an ask went unanswered, and the views the call brought.
async fn gate_and_run(
    env: &ToolCallEnv<'_>,
    request: &ToolCall,
    tool: &OfferedTool,
    arguments: Value,
) -> (ToolResult, bool, FreshViews) {
    let mut gate = match pre_tool_use(env, request, tool, arguments).await {
        Ok(gate) => gate,
        Err(result) => return (result, false, Vec::new()),
    };
    let ruling = decide(env, request, tool, &gate).await;
    let mut fresh_views = Vec::new();
    let result = match ruling.allowed {
        Err(refusal) => refusal,
        Ok(()) => {
            let arguments = std::mem::take(&mut gate.arguments);
            call_tool(env, request, tool, &gate.tool_use, arguments, &mut fresh_views).await
        }
    };
    let mut result = post_tool_use(env, &gate.tool_use, result).await;
    for context in gate.context {
        result.output.push_str("\n\n");
        result.output.push_str(&context);
    }
    (result, ruling.unanswered_ask, fresh_views)
}

/// What the `pre-tool-use` hooks made of a call: the call as they left it (arguments
/// possibly rewritten), their folded verdict, every ask, and the context they add to the
/// result.
struct Gate {
    tool_use: ToolUse,
    /// The arguments as they stand, parsed; the tool gets `tool_use`'s text.
    arguments: Value,
    verdict: Verdict,
    /// Every ask, not only the one the fold keeps: a standing approval must answer them all.
    asks: Vec<Ask>,
    context: Vec<String>,
}

/// Folds the `pre-tool-use` hooks in config order. `Err` is the result for the model when
/// a hook rewrote the arguments so that they no longer meet the schema.
async fn pre_tool_use(
    env: &ToolCallEnv<'_>,
    request: &ToolCall,
    tool: &OfferedTool,
    arguments: Value,
) -> Result<Gate, ToolResult> {
    let tool_use = ToolUse {
        // The model's own text: it parsed and met the schema, so there is no need to print
        // `arguments` back out.
        call: request.clone(),
        plugin: tool.owner.name(),
        mutates: tool.mutates,
    };
    let mut gate =
        Gate { tool_use, arguments, verdict: Verdict::Allow, asks: Vec::new(), context: Vec::new() };
    fold_hooks(env, env.ctx, env.bag, request, tool, &mut gate).await?;
    // A child's call is decided by the sessions above it too, each as it stood when the
    // child started: no rule or mode of theirs can be widened by starting a child.
    for ancestor in env.child.iter().flat_map(|child| &child.ancestors) {
        let ctx = CallContext { session_id: ancestor.session_id.clone(), ..env.ctx.clone() };
        fold_hooks(env, &ctx, &ancestor.bag, request, tool, &mut gate).await?;
    }
    Ok(gate)
}

/// Folds the `pre-tool-use` hooks in config order, called for the session `bag` holds.
async fn fold_hooks(
    env: &ToolCallEnv<'_>,
    ctx: &CallContext,
    bag: &StateBag,
    request: &ToolCall,
    tool: &OfferedTool,
    gate: &mut Gate,
) -> Result<(), ToolResult> {
    for hook in env.plugins().plugins() {
        if !hook.sees_pre_tool_use(&gate.tool_use) {
            continue;
        }
        let outcome = match hook.pre_tool_use(ctx, bag, &gate.tool_use).await {
            Ok(output) => {
                forward_events(env.sink, hook, output.events);
                output.value
            }
            Err(error) => {
                report_failure(env.sink, &error);
                if !hook.fail_open() {
                    gate.fold(Verdict::Deny {
                        reason: format!("the policy plugin failed, so the call is refused ({error})"),
                        by: hook.label(),
                    });
                }
                continue;
            }
        };
        if let Some(text) = outcome.updated_arguments {
            let updated: Value = serde_json::from_str(&text).expect("checked by the runtime");
            if let Err(result) = validate(tool, &request.name, &updated) {
                return Err(failure(format!(
                    "{} rewrote the arguments badly: {}",
                    hook.label(),
                    result.output
                )));
            }
            gate.arguments = updated;
            gate.tool_use.call.arguments = text;
        }
        gate.context.extend(outcome.context);
        let verdict = match outcome.decision {
            None | Some(Decision::Allow) => Verdict::Allow,
            Some(Decision::Ask(reason)) => {
                gate.asks.push(Ask { reason: reason.clone(), by: hook.label() });
                Verdict::Ask { reason, by: hook.label() }
            }
            Some(Decision::Deny(reason)) => Verdict::Deny { reason, by: hook.label() },
        };
        gate.fold(verdict);
    }
    Ok(())
}

impl Gate {
    fn fold(&mut self, verdict: Verdict) {
        self.verdict = std::mem::replace(&mut self.verdict, Verdict::Allow).fold(verdict);
    }
}

/// Runs the allowed call; a view its plugin brought with it goes to `fresh_views`.
async fn call_tool(
    env: &ToolCallEnv<'_>,
    request: &ToolCall,
    tool: &OfferedTool,
    tool_use: &ToolUse,
    arguments: Value,
    fresh_views: &mut FreshViews,
) -> ToolResult {
    let announce = |arguments: Value| {
        let (id, name, plugin) = (request.id.clone(), request.name.clone(), tool.owner.name());
        env.sink.emit(&Event::ToolCall { id, name, plugin, arguments, refused: false });
    };
    let plugin = match &tool.owner {
        ToolOwner::Plugin(plugin) => {
            // Not needed past this point: a plugin gets the text.
            announce(arguments);
            plugin
        }
        // A server gets the parsed object, as the hooks left it.
        ToolOwner::Mcp { server, tool } => {
            announce(arguments.clone());
            return server.call(tool, arguments, env.mcp_output_bytes()).await;
        }
    };
    match plugin.call_tool(env.ctx, env.bag, &tool_use.call, env.memo).await {
        Ok(output) => {
            forward_events(env.sink, plugin, output.events);
            for edit in output.edits {
                env.sink.emit(&Event::FileEdited { id: request.id.clone(), edit });
            }
            fresh_views.extend(output.view.map(|view| (plugin.clone(), view)));
            match output.value {
                Ok(text) => ToolResult { ok: true, output: text },
                Err(text) => failure(text),
            }
        }
        Err(error) => {
            report_failure(env.sink, &error);
            failure(format!("the tool failed: {error}"))
        }
    }
}

/// The `post-tool-use` hooks in config order, each seeing (and maybe replacing) the result.
async fn post_tool_use(env: &ToolCallEnv<'_>, tool_use: &ToolUse, mut result: ToolResult) -> ToolResult {
    for hook in env.plugins().plugins() {
        if !hook.sees_post_tool_use(tool_use, &result) {
            continue;
        }
        let outcome = heard(env.sink, hook, hook.post_tool_use(env.ctx, env.bag, tool_use, &result).await);
        if let Some(replacement) = outcome.and_then(|outcome| outcome.replace) {
            result = replacement;
        }
    }
    result
}

/// What became of a call's folded verdict: allowed, or refused with the result the model
/// sees; and whether an `ask` went unanswered on the way.
struct Ruling {
    allowed: Result<(), ToolResult>,
    unanswered_ask: bool,
}

impl Ruling {
    fn allow() -> Self {
        Self { allowed: Ok(()), unanswered_ask: false }
    }

    fn refuse(result: ToolResult) -> Self {
        Self { allowed: Err(result), unanswered_ask: false }
    }

    fn unanswered(self) -> Self {
        Self { unanswered_ask: true, ..self }
    }
}

/// Turns the folded verdict into allowed / refused, asking the operator for an `ask`
/// that no standing approval covers.
async fn decide(env: &ToolCallEnv<'_>, request: &ToolCall, tool: &OfferedTool, gate: &Gate) -> Ruling {
    let (reason, asked_by) = match &gate.verdict {
        Verdict::Allow => return Ruling::allow(),
        Verdict::Deny { reason, by } => {
            return Ruling::refuse(refuse(env, request, tool.owner.name(), gate, reason.clone(), by.clone()));
        }
        Verdict::Ask { reason, by } => (reason.clone(), by.clone()),
    };
    if StandingApprovals::load(env.bag).cover(&request.name, &gate.arguments, &gate.asks) {
        return Ruling::allow();
    }
    let reviewed = review(env, &gate.tool_use, &gate.arguments, &reason).await;
    let overriding = matches!(reviewed, Reviewed::Failed { .. });
    let reason = match reviewed {
        Reviewed::Allowed => return Ruling::allow(),
        Reviewed::Denied { reason, by } => {
            return Ruling::refuse(refuse(env, request, tool.owner.name(), gate, reason, by));
        }
        Reviewed::NotDecided => reason,
        Reviewed::Failed { error, by } => format!("{reason} (the review by {by} failed: {error})"),
    };
    let approval = ApprovalRequest {
        call_id: request.id.clone(),
        tool: request.name.clone(),
        plugin: tool.owner.name(),
        arguments: gate.arguments.clone(),
        arguments_text: gate.tool_use.call.arguments.clone(),
        reason,
        asked_by,
        agent: env.child.map(|child| child.label.clone()),
    };
    let answer = ask_operator(env, &approval).await;
    // After a review, the operator overrides the review for this exact call: an "always"
    // answer holds for these arguments, never for the tool at large.
    let answer = match answer {
        ApprovalAnswer::AllowToolAlways if overriding => ApprovalAnswer::AllowExactAlways,
        answer => answer,
    };
    follow_answer(env, request, gate, approval, answer)
}

/// Puts `approval` to the operator. In `--json` mode the two events are how a watcher sees
/// the question and its answer.
async fn ask_operator(env: &ToolCallEnv<'_>, approval: &ApprovalRequest) -> ApprovalAnswer {
    env.sink.emit(&Event::ApprovalRequested {
        id: approval.call_id.clone(),
        name: approval.tool.clone(),
        plugin: approval.plugin.clone(),
        arguments: approval.arguments.clone(),
        reason: approval.reason.clone(),
        asked_by: approval.asked_by.clone(),
    });
    let answer = env.approver.decide(approval).await;
    env.sink.emit(&Event::ApprovalAnswered {
        id: approval.call_id.clone(),
        name: approval.tool.clone(),
        answer: answer.clone(),
    });
    answer
}

/// The ruling the operator's answer makes; "always" answers are recorded as standing
/// approvals, and an unanswerable ask falls to `agent.on_ask`.
fn follow_answer(
    env: &ToolCallEnv<'_>,
    request: &ToolCall,
    gate: &Gate,
    approval: ApprovalRequest,
    answer: ApprovalAnswer,
) -> Ruling {
    let allow = |decision: CallDecision| {
        env.sink.emit(&Event::ToolDecision {
            id: request.id.clone(),
            name: request.name.clone(),
            decision,
            reason: approval.reason.clone(),
            decided_by: "operator".into(),
        });
        Ruling::allow()
    };
    match answer {
        ApprovalAnswer::AllowOnce => allow(CallDecision::AllowOnce),
        ApprovalAnswer::AllowToolAlways => {
            StandingApprovals::record(env.bag, &answer, &request.name, &gate.arguments, &gate.asks);
            allow(CallDecision::AllowToolAlways)
        }
        ApprovalAnswer::AllowExactAlways => {
            StandingApprovals::record(env.bag, &answer, &request.name, &gate.arguments, &gate.asks);
            allow(CallDecision::AllowExactAlways)
        }
        ApprovalAnswer::Deny { reason: why } => {
            let why = why.unwrap_or_else(|| "the operator declined".to_owned());
            Ruling::refuse(refuse(env, request, approval.plugin, gate, why, "operator".into()))
        }
        ApprovalAnswer::Unanswerable => match env.on_ask() {
            OnAsk::Allow => allow(CallDecision::AllowByDefault).unanswered(),
            OnAsk::Deny => {
                let reason = format!(
                    "{} — approval was needed and nobody could answer (agent.on_ask = \"deny\")",
                    approval.reason
                );
                Ruling::refuse(refuse(env, request, approval.plugin, gate, reason, approval.asked_by))
                    .unanswered()
            }
        },
    }
}

/// Reports a refusal and makes the result the model sees. The call itself is announced
/// first, marked refused: a refusal that named no tool and no arguments would leave the
/// operator (and an editor, a web page) unable to tell what the policy stopped.
fn refuse(
    env: &ToolCallEnv<'_>,
    request: &ToolCall,
    plugin: String,
    gate: &Gate,
    reason: String,
    by: String,
) -> ToolResult {
    env.sink.emit(&Event::ToolCall {
        id: request.id.clone(),
        name: request.name.clone(),
        plugin,
        arguments: gate.arguments.clone(),
        refused: true,
    });
    env.sink.emit(&Event::ToolDecision {
        id: request.id.clone(),
        name: request.name.clone(),
        decision: CallDecision::Deny,
        reason: reason.clone(),
        decided_by: by.clone(),
    });
    failure(format!("the call was refused by {by}: {reason}"))
}

fn failure(output: String) -> ToolResult {
    ToolResult { ok: false, output }
}
