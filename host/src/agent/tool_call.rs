//! One tool call, start to finish: find the tool, parse and validate the arguments, fold
//! the `pre-tool-use` hooks (asking the operator when one says ask), run the tool, let the
//! `post-tool-use` hooks see or rewrite the result.

use serde_json::Value;

use super::approval::{ApprovalAnswer, ApprovalRequest, Ask, StandingApprovals};
use super::hooks::Verdict;
use super::prepare::{OfferedTool, Prepared};
use super::report::{forward_events, report_failure};
use crate::config::OnAsk;
use crate::events::{Event, EventSink};
use crate::model::ToolCallRequest;
use crate::plugins::PluginSet;
use crate::plugins::{CallContext, Decision, ToolCall, ToolResult, ToolUse};
use crate::state::StateBag;

/// Errors from schema validation shown to the model, at most.
const MAX_SCHEMA_ERRORS: usize = 5;

/// What the loop needs to run a call.
pub struct CallEnv<'a> {
    pub set: &'a PluginSet,
    pub prepared: &'a Prepared,
    pub ctx: &'a CallContext,
    pub bag: &'a StateBag,
    pub sink: &'a dyn EventSink,
    pub approver: &'a dyn super::Approver,
    pub on_ask: OnAsk,
}

/// The result for the model, and whether an `ask` went unanswered (which keeps the
/// completion loop from continuing).
pub struct CallReport {
    pub result: ToolResult,
    pub unanswered_ask: bool,
}

pub async fn run(env: &CallEnv<'_>, request: &ToolCallRequest) -> CallReport {
    let mut unanswered_ask = false;
    let result = match checked_call(env, request) {
        Err(result) => result,
        Ok((tool, arguments)) => {
            let (result, unanswered) = gate_and_run(env, request, tool, arguments).await;
            unanswered_ask = unanswered;
            result
        }
    };
    env.sink.emit(&Event::ToolResult {
        id: request.id.clone(),
        name: request.name.clone(),
        ok: result.ok,
        output: result.output.clone(),
    });
    CallReport { result, unanswered_ask }
}

/// The tool and its parsed, schema-valid arguments; or the error result for the model.
fn checked_call<'p>(
    env: &CallEnv<'p>,
    request: &ToolCallRequest,
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

async fn gate_and_run(
    env: &CallEnv<'_>,
    request: &ToolCallRequest,
    tool: &OfferedTool,
    mut arguments: Value,
) -> (ToolResult, bool) {
    let mut tool_use = ToolUse {
        call: ToolCall {
            id: request.id.clone(),
            name: request.name.clone(),
            // The model's own text: it parsed and met the schema, so there is no need to
            // print `arguments` back out.
            arguments: request.arguments.clone(),
        },
        plugin: tool.plugin.name().to_owned(),
        mutates: tool.mutates,
    };
    let mut verdict = Verdict::Allow;
    // Every ask, not only the one the fold keeps: a standing approval must answer them all.
    let mut asks: Vec<Ask> = Vec::new();
    let mut added_context: Vec<String> = Vec::new();
    for hook in env.set.plugins() {
        if !hook.sees_pre_tool_use(&tool_use) {
            continue;
        }
        let outcome = match hook.pre_tool_use(env.ctx, env.bag, &tool_use).await {
            Ok(output) => {
                forward_events(env.sink, hook, output.events);
                output.value
            }
            Err(error) => {
                report_failure(env.sink, &error);
                if !hook.fail_open() {
                    verdict = verdict.fold(Verdict::Deny {
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
                return (
                    failure(format!("{} rewrote the arguments badly: {}", hook.label(), result.output)),
                    false,
                );
            }
            arguments = updated;
            tool_use.call.arguments = text;
        }
        added_context.extend(outcome.context);
        verdict = verdict.fold(match outcome.decision {
            None | Some(Decision::Allow) => Verdict::Allow,
            Some(Decision::Ask(reason)) => {
                asks.push(Ask { reason: reason.clone(), by: hook.label() });
                Verdict::Ask { reason, by: hook.label() }
            }
            Some(Decision::Deny(reason)) => Verdict::Deny { reason, by: hook.label() },
        });
    }
    let asked = Asked { arguments: &arguments, text: &tool_use.call.arguments, asks: &asks };
    let (allowed, unanswered) = decide(env, request, tool, asked, verdict).await;
    let mut result = match allowed {
        Err(refusal) => refusal,
        Ok(()) => {
            env.sink.emit(&Event::ToolCall {
                id: request.id.clone(),
                name: request.name.clone(),
                plugin: tool.plugin.name().to_owned(),
                // Not needed past this point: the tool gets the text.
                arguments: std::mem::take(&mut arguments),
            });
            match tool.plugin.call_tool(env.ctx, env.bag, &tool_use.call).await {
                Ok(output) => {
                    forward_events(env.sink, &tool.plugin, output.events);
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
    };
    for hook in env.set.plugins() {
        if !hook.sees_post_tool_use(&tool_use, &result) {
            continue;
        }
        match hook.post_tool_use(env.ctx, env.bag, &tool_use, &result).await {
            Ok(output) => {
                forward_events(env.sink, hook, output.events);
                if let Some(replacement) = output.value.replace {
                    result = replacement;
                }
            }
            Err(error) => report_failure(env.sink, &error),
        }
    }
    for context in added_context {
        result.output.push_str("\n\n");
        result.output.push_str(&context);
    }
    (result, unanswered)
}

/// What an `ask` is about: the arguments (parsed, and as the text the tool gets) and every
/// hook's ask.
struct Asked<'a> {
    arguments: &'a Value,
    text: &'a str,
    asks: &'a [Ask],
}

/// Turns the folded verdict into allowed / refused, asking the operator for an `ask`.
async fn decide(
    env: &CallEnv<'_>,
    request: &ToolCallRequest,
    tool: &OfferedTool,
    asked: Asked<'_>,
    verdict: Verdict,
) -> (Result<(), ToolResult>, bool) {
    let arguments = asked.arguments;
    let refuse = |decision: &str, reason: String, by: String| {
        env.sink.emit(&Event::ToolDecision {
            id: request.id.clone(),
            name: request.name.clone(),
            decision: decision.to_owned(),
            reason: reason.clone(),
            decided_by: by.clone(),
        });
        failure(format!("the call was refused by {by}: {reason}"))
    };
    let (reason, asked_by) = match verdict {
        Verdict::Allow => return (Ok(()), false),
        Verdict::Deny { reason, by } => return (Err(refuse("deny", reason, by)), false),
        Verdict::Ask { reason, by } => (reason, by),
    };
    if StandingApprovals::load(env.bag).cover(&request.name, arguments, asked.asks) {
        return (Ok(()), false);
    }
    let approval = ApprovalRequest {
        call_id: request.id.clone(),
        tool: request.name.clone(),
        plugin: tool.plugin.name().to_owned(),
        arguments: arguments.clone(),
        arguments_text: asked.text.to_owned(),
        reason: reason.clone(),
        asked_by: asked_by.clone(),
    };
    // In `--json` mode these two events are how a watcher sees the question and its answer.
    env.sink.emit(&Event::ApprovalRequested {
        id: request.id.clone(),
        name: request.name.clone(),
        plugin: approval.plugin.clone(),
        arguments: arguments.clone(),
        reason: reason.clone(),
        asked_by: asked_by.clone(),
    });
    let answer = env.approver.decide(&approval).await;
    let (answer_name, answer_reason) = match &answer {
        ApprovalAnswer::AllowOnce => ("allow_once", None),
        ApprovalAnswer::AllowToolAlways => ("allow_tool_always", None),
        ApprovalAnswer::AllowExactAlways => ("allow_exact_always", None),
        ApprovalAnswer::Deny(why) => ("deny", why.clone()),
        ApprovalAnswer::Unanswerable => ("unanswerable", None),
    };
    env.sink.emit(&Event::ApprovalAnswered {
        id: request.id.clone(),
        name: request.name.clone(),
        answer: answer_name.to_owned(),
        reason: answer_reason,
    });
    let allow = |how: &str| {
        env.sink.emit(&Event::ToolDecision {
            id: request.id.clone(),
            name: request.name.clone(),
            decision: how.to_owned(),
            reason: reason.clone(),
            decided_by: "operator".into(),
        });
    };
    match answer {
        ApprovalAnswer::AllowOnce => {
            allow("allow_once");
            (Ok(()), false)
        }
        ApprovalAnswer::AllowToolAlways | ApprovalAnswer::AllowExactAlways => {
            StandingApprovals::record(env.bag, &answer, &request.name, arguments, asked.asks);
            allow("allow_always");
            (Ok(()), false)
        }
        ApprovalAnswer::Deny(why) => {
            let why = why.unwrap_or_else(|| "the operator declined".to_owned());
            (Err(refuse("deny", why, "operator".into())), false)
        }
        ApprovalAnswer::Unanswerable => match env.on_ask {
            OnAsk::Allow => {
                allow("allow_by_default");
                (Ok(()), true)
            }
            OnAsk::Deny => (
                Err(refuse(
                    "deny",
                    format!(
                        "{reason} — approval was needed and nobody could answer (agent.on_ask = \"deny\")"
                    ),
                    asked_by,
                )),
                true,
            ),
        },
    }
}

fn failure(output: String) -> ToolResult {
    ToolResult { ok: false, output }
}
