//! One user turn: the loop of DESIGN.md's "One model round trip".

use std::collections::HashSet;

use super::report::{forward_events, report_failure};
use super::tool_call::{self, CallEnv};
use super::{Approver, Host, TurnEnd, TurnError, TurnOutcome};
use crate::events::{Event, EventSink, ToolCallEvent};
use crate::model::{Message, ModelRequest, Role, ToolCallRequest};
use crate::plugins::{CallContext, Capabilities, StopOutcome};
use crate::state::Session;

impl Host {
    /// Runs one user turn to its end. The session is committed after every step (a model
    /// reply, with the results of its tools when none of them changes anything), so an
    /// error (or a dropped future: Ctrl-C) leaves it at the last complete step.
    pub async fn run_turn(
        &self,
        session: &mut Session,
        prompt: &str,
        sink: &dyn EventSink,
        approver: &dyn Approver,
    ) -> Result<TurnOutcome, TurnError> {
        let store = self.sessions().store().clone();
        close_dangling_calls(session);
        let mut ctx = CallContext {
            session_id: session.id().to_owned(),
            model_calls: session.model_calls(),
            turn_iteration: 0,
        };
        if session.is_empty() {
            self.session_start(session, &ctx, sink).await;
        }
        if let Some(end) = self.submit_prompt(session, &ctx, prompt, sink).await {
            session.commit(&*store)?;
            sink.emit(&Event::TurnEnded { reason: end.as_str().into(), iterations: 0 });
            return Ok(TurnOutcome { end, iterations: 0, reply: String::new() });
        }
        session.commit(&*store)?;

        let max_iterations = self.config().agent.max_iterations;
        let mut reply_text = String::new();
        let mut iteration = 0;
        while iteration < max_iterations {
            iteration += 1;
            let set = self.plugins();
            ctx.turn_iteration = iteration;
            ctx.model_calls = session.model_calls();
            let prepared = self.prepare_call(&set, &ctx, session, sink).await?;
            sink.emit(&Event::ModelRequest {
                iteration,
                tools: prepared.tools.len(),
                messages: session.history().len() + prepared.injected.len() + 1,
            });
            let request = ModelRequest {
                session_id: session.id(),
                system: &prepared.system,
                history: session.history(),
                injected: &prepared.injected,
                tools: &prepared.tools,
            };
            let mut on_text = |text: &str| sink.emit(&Event::AssistantDelta { text: text.to_owned() });
            let reply = match self.model().complete(&request, &mut on_text).await {
                Ok(reply) => reply,
                Err(error) => {
                    // Plugin state changed while preparing (injected-message bookkeeping)
                    // is kept; the failed call itself left nothing.
                    session.commit(&*store)?;
                    return Err(error.into());
                }
            };
            session.count_model_call();
            let tool_calls = unique_ids(reply.tool_calls);
            sink.emit(&Event::AssistantMessage {
                text: reply.text.clone(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| ToolCallEvent {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
            });
            reply_text = reply.text.clone();
            session.push(Message::assistant(reply.text, tool_calls.clone()));
            // A reply whose tools change nothing outside the agent's own bookkeeping becomes
            // durable together with their results, as one step: a crash in between leaves
            // the session before the reply, which a rerun redoes with nothing out of place.
            // A reply that asks for a change is made durable first, so that a crash during
            // the change shows up as a call cut short instead of vanishing.
            if tool_calls.is_empty() || prepared.any_mutating(&tool_calls) {
                session.commit(&*store)?;
            }

            if !tool_calls.is_empty() {
                let env = CallEnv {
                    set: &set,
                    prepared: &prepared,
                    ctx: &ctx,
                    bag: session.bag(),
                    sink,
                    approver,
                    on_ask: self.config().agent.on_ask,
                };
                let mut results = Vec::with_capacity(tool_calls.len());
                let mut unanswered_ask = false;
                for call in &tool_calls {
                    let report = tool_call::run(&env, call).await;
                    unanswered_ask |= report.unanswered_ask;
                    results.push(Message::tool(call.id.clone(), report.result.output));
                }
                // One step: the batch's results become durable together.
                for result in results {
                    session.push(result);
                }
                session.commit(&*store)?;
                if unanswered_ask {
                    // An approval nobody could give ends the turn: the model must not keep
                    // retrying what the operator has not seen.
                    return Ok(self.end(sink, TurnEnd::Done, iteration, reply_text));
                }
                continue;
            }

            match self.stop_hooks(session, &ctx, &reply_text, sink).await {
                Some(message) if iteration < max_iterations => {
                    session.push(Message::user(message));
                    session.commit(&*store)?;
                }
                _ => {
                    session.commit(&*store)?;
                    return Ok(self.end(sink, TurnEnd::Done, iteration, reply_text));
                }
            }
        }
        Ok(self.end(sink, TurnEnd::MaxIterations, iteration, reply_text))
    }

    fn end(&self, sink: &dyn EventSink, end: TurnEnd, iterations: u32, reply: String) -> TurnOutcome {
        sink.emit(&Event::TurnEnded { reason: end.as_str().into(), iterations });
        TurnOutcome { end, iterations, reply }
    }

    /// `session-start` hooks, once per new session; their context goes into the history.
    async fn session_start(&self, session: &mut Session, ctx: &CallContext, sink: &dyn EventSink) {
        let set = self.plugins();
        for plugin in set.plugins().iter().filter(|p| p.implements(Capabilities::SESSION_START)) {
            match plugin.session_start(ctx, session.bag()).await {
                Ok(output) => {
                    forward_events(sink, plugin, output.events);
                    if let Some(context) = output.value.filter(|c| !c.trim().is_empty()) {
                        session.push(Message::system(context));
                    }
                }
                Err(error) => report_failure(sink, &error),
            }
        }
    }

    /// `user-prompt-submit` hooks, then the prompt into the history. `Some` when blocked.
    async fn submit_prompt(
        &self,
        session: &mut Session,
        ctx: &CallContext,
        prompt: &str,
        sink: &dyn EventSink,
    ) -> Option<TurnEnd> {
        let set = self.plugins();
        let mut contexts = Vec::new();
        for plugin in set.plugins().iter().filter(|p| p.implements(Capabilities::USER_PROMPT_SUBMIT)) {
            let outcome = match plugin.user_prompt_submit(ctx, session.bag(), prompt).await {
                Ok(output) => {
                    forward_events(sink, plugin, output.events);
                    output.value
                }
                Err(error) => {
                    report_failure(sink, &error);
                    continue;
                }
            };
            if let Some(reason) = outcome.block {
                sink.emit(&Event::PromptBlocked { plugin: plugin.name().to_owned(), reason: reason.clone() });
                return Some(TurnEnd::Blocked { plugin: plugin.name().to_owned(), reason });
            }
            contexts.extend(outcome.context);
        }
        sink.emit(&Event::UserMessage { text: prompt.to_owned() });
        session.push(Message::user(prompt));
        for context in contexts {
            session.push(Message::system(context));
        }
        None
    }

    /// `stop` hooks in config order; the first that continues decides.
    async fn stop_hooks(
        &self,
        session: &Session,
        ctx: &CallContext,
        reply: &str,
        sink: &dyn EventSink,
    ) -> Option<String> {
        let set = self.plugins();
        for plugin in set.plugins().iter().filter(|p| p.implements(Capabilities::STOP)) {
            match plugin.stop(ctx, session.bag(), reply).await {
                Ok(output) => {
                    forward_events(sink, plugin, output.events);
                    if let StopOutcome::Continue(message) = output.value {
                        sink.emit(&Event::Continued {
                            plugin: plugin.name().to_owned(),
                            message: message.clone(),
                        });
                        return Some(message);
                    }
                }
                Err(error) => report_failure(sink, &error),
            }
        }
        None
    }
}

/// Gives every tool call of the last assistant message a result. A turn cut short (Ctrl-C,
/// a crash, a killed process) can leave calls unanswered, and the model API refuses a
/// history like that.
fn close_dangling_calls(session: &mut Session) {
    let history = session.history();
    let Some(position) = history.iter().rposition(|m| m.role == Role::Assistant) else {
        return;
    };
    let answered: HashSet<&str> =
        history[position + 1..].iter().filter_map(|m| m.tool_call_id.as_deref()).collect();
    let missing: Vec<String> = history[position]
        .tool_calls
        .iter()
        .filter(|call| !answered.contains(call.id.as_str()))
        .map(|call| call.id.clone())
        .collect();
    for id in missing {
        session.push(Message::tool(id, "the call was interrupted before it finished; it may not have run"));
    }
}

/// Tool-call ids made unique within one reply (a model that repeats an id would otherwise
/// get two results for one call and a history the API refuses).
fn unique_ids(mut calls: Vec<ToolCallRequest>) -> Vec<ToolCallRequest> {
    let mut seen = HashSet::new();
    for (index, call) in calls.iter_mut().enumerate() {
        if !seen.insert(call.id.clone()) {
            call.id = format!("{}_{index}", call.id);
            seen.insert(call.id.clone());
        }
    }
    calls
}
