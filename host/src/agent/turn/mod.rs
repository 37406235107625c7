//! One user turn: the loop of docs/architecture.md's "One model round trip".

use std::collections::HashSet;
use std::sync::Arc;

use super::children::{self, ChildTurn};
use super::report::heard;
use compact::{CompactOutcome, Compactor};
use end::EndReport;
use judges::{Ending, Judging};
use meter::Charge;
use prepare::{Prepared, prepare_call};
use reply::{ReplyReport, cut_call_answer, reply_stop};

pub(super) mod compact;
mod end;
pub(super) mod judges;
pub(super) mod meter;
pub mod prepare;
mod reply;
mod tools;
use super::{Approver, Host, LiveSession, Snapshot, TurnEnd, TurnError, TurnOutcome};
use crate::compacted_history::Reason;
use crate::events::{ContextEstimate, Event, EventSink, ReplyStop, TokenUsage};
use crate::model::tokens::{ContextAccount, TokenBudget};
use crate::model::{Message, ModelError, ModelReply, ModelRequest, Role, StopReason};
use crate::plugins::{CallContext, Exports};
use crate::state::{EstimatedUsage, Session, SessionStore};
use crate::telemetry;
use crate::tools::{ToolCall, call_ids};
use tracing::Instrument as _;

/// [`Host::run_turn`]'s work. A child agent's session, given a prompt by an operator, runs
/// narrowed by its link, its calls decided by its ancestors' hooks as they stand now.
pub(in crate::agent) async fn run(
    host: &Host,
    session: &mut LiveSession,
    prompt: &str,
    sink: &dyn EventSink,
    approver: &dyn Approver,
) -> Result<TurnOutcome, TurnError> {
    let child = children::own_turn(host, session)?;
    run_with(host, session, Some(prompt), sink, approver, child).await
}

/// A child agent's turn, run by its parent's step: with its prompt, or, when `prompt` is
/// `None`, going on with the turn a crash cut short.
pub(in crate::agent) async fn run_child(
    host: &Host,
    session: &mut LiveSession,
    prompt: Option<&str>,
    sink: &dyn EventSink,
    approver: &dyn Approver,
    child: ChildTurn,
) -> Result<TurnOutcome, TurnError> {
    run_with(host, session, prompt, sink, approver, Some(child)).await
}

async fn run_with(
    host: &Host,
    session: &mut LiveSession,
    prompt: Option<&str>,
    sink: &dyn EventSink,
    approver: &dyn Approver,
    child: Option<ChildTurn>,
) -> Result<TurnOutcome, TurnError> {
    let mut end = EndReport::new(sink);
    let mut turn = Turn {
        host,
        store: host.sessions().store().clone(),
        ctx: host.call_context(session),
        session,
        sink,
        approver,
        end: &mut end,
        child,
    };
    let span = telemetry::invoke_agent(&turn.ctx.session_id);
    let mut result = turn.run(prompt).instrument(span.clone()).await;
    // What the last hooks' model calls spent (a judge's, say) is the turn's too.
    turn.count_plugin_tokens();
    if let Ok(outcome) = &mut result {
        outcome.tokens = end.meter.tokens();
    }
    end.finish(&result);
    let ended = result.as_ref().ok().map(|outcome| end_name(outcome.end));
    telemetry::turn_ended(&span, ended.as_deref().unwrap_or("error"));
    result
}

/// A turn in progress: what each of its steps needs.
struct Turn<'a, 'e> {
    host: &'a Host,
    session: &'a mut LiveSession,
    store: Arc<dyn SessionStore>,
    ctx: CallContext,
    sink: &'a dyn EventSink,
    approver: &'a dyn Approver,
    end: &'a mut EndReport<'e>,
    /// Set when the session is a child agent's.
    child: Option<ChildTurn>,
}

/// What the turn does after a round trip.
enum Next {
    /// Another round trip: the model has tool results or a stop hook's message to read.
    Continue,
    Stop(TurnEnd),
}

impl Turn<'_, '_> {
    async fn run(&mut self, prompt: Option<&str>) -> Result<TurnOutcome, TurnError> {
        // The hooks before the first round trip run on one snapshot too.
        let opening = self.host.snapshot();
        self.resume_children(&opening).await?;
        close_dangling_calls(self.session);
        // What was waiting is this turn's prompt: only input that arrives from now on
        // pre-empts its continuations.
        self.session.input_waiting().take();
        if let Some(prompt) = prompt {
            if self.session.is_empty() {
                self.session_start(&opening).await;
            }
            let blocked = self.submit_prompt(&opening, prompt).await;
            self.end_step(&opening).await?;
            if let Some(end) = blocked {
                return Ok(TurnOutcome { end, iterations: 0, reply: String::new(), tokens: 0 });
            }
        }
        let max_iterations = self.caps(&opening).max_iterations;
        let mut reply = String::new();
        let mut iteration = 0;
        while iteration < max_iterations {
            // The deployment's caps, before every model call: no plugin can raise them.
            if let Some(end) = self.spent(&self.caps(&opening)) {
                return Ok(TurnOutcome { end, iterations: iteration, reply, tokens: 0 });
            }
            iteration += 1;
            let (snapshot, last) = (self.host.snapshot(), iteration == max_iterations);
            if let Next::Stop(end) = self.round_trip(&snapshot, iteration, last, &mut reply).await? {
                return Ok(TurnOutcome { end, iterations: iteration, reply, tokens: 0 });
            }
        }
        Ok(TurnOutcome { end: TurnEnd::MaxIterations, iterations: iteration, reply, tokens: 0 })
    }

    /// One model call and what its reply asks for (tools, or the stop hooks), all on
    /// `snapshot`. `reply` becomes the model's text.
    async fn round_trip(
        &mut self,
        snapshot: &Snapshot,
        iteration: u32,
        last: bool,
        reply: &mut String,
    ) -> Result<Next, TurnError> {
        self.ctx.turn_iteration = iteration;
        self.ctx.model_calls = self.session.model_calls();
        let mut prepared = prepare_call(snapshot, &self.ctx, self.session, self.sink).await?;
        self.session.bring_views(std::mem::take(&mut prepared.fresh_views));
        let answer = self.call_model(snapshot, &prepared, iteration).await?;
        // Cut at the output limit: the text stands, but any tool call in it may be cut short.
        let cut = answer.stop == StopReason::Length;
        let history = self.session.history();
        let earlier = history.iter().flat_map(|message| &message.tool_calls);
        let tool_calls = call_ids::unique_ids(self.session.id(), history.len(), earlier, answer.tool_calls);
        let usage = answer.usage;
        let report = ReplyReport {
            text: &answer.text,
            tool_calls: &tool_calls,
            stop: reply_stop(&answer.stop),
            usage,
            reasoning: &answer.reasoning,
        };
        self.sink.emit(&report.event());
        reply.clone_from(&answer.text);
        self.session.push_reply(Message::assistant(answer.text, tool_calls.clone()), usage);
        if cut && !tool_calls.is_empty() {
            self.refuse_cut_calls(snapshot, &tool_calls).await?;
            return Ok(Next::Continue);
        }
        // A reply whose tools change nothing outside the agent's own bookkeeping becomes
        // durable together with their results, as one step: a crash in between leaves
        // the session before the reply, which a rerun redoes with nothing out of place.
        // A reply that asks for a change is made durable first, so that a crash during
        // the change shows up as a call cut short instead of vanishing.
        if tool_calls.is_empty() || prepared.any_mutating(&tool_calls) {
            self.end_step(snapshot).await?;
        }
        if !tool_calls.is_empty() {
            // The tools' calls read the meter with this reply's tokens in it.
            self.spent(&self.caps(snapshot));
            return self.run_tools(snapshot, &prepared, &tool_calls).await;
        }
        // A turn out of budget ends with it, and one out of continuations ends as the model
        // ended it: either way no `stop` hook is asked (its judgement may cost a model call).
        let agent = &self.caps(snapshot);
        if let Some(end) = self.spent(agent) {
            self.end_step(snapshot).await?;
            return Ok(Next::Stop(end));
        }
        // On the last model call no continuation could be sent: nobody is asked.
        let may_continue = self.end.meter.may_continue(agent) && !last;
        let judging = Judging {
            plugins: &snapshot.plugins,
            ctx: &self.ctx,
            bag: self.session.bag(),
            stops: self.session.stop_memo(),
            sink: self.sink,
            input: self.session.input_waiting(),
        };
        let ending = judging.ending(reply, may_continue).await;
        if let Ending::Continue(message) = ending {
            self.end.meter.continued();
            self.session.push(Message::user(message));
            self.end_step(snapshot).await?;
            return Ok(Next::Continue);
        }
        self.end_step(snapshot).await?;
        Ok(Next::Stop(match ending {
            Ending::Stopped(end) => end,
            _ if cut => TurnEnd::ReplyCut,
            _ => TurnEnd::Done,
        }))
    }

    /// Answers every call of a reply cut at the output limit with an error instead of running
    /// it (its arguments may be cut short), as one step with the reply.
    async fn refuse_cut_calls(
        &mut self,
        snapshot: &Snapshot,
        tool_calls: &[ToolCall],
    ) -> Result<(), TurnError> {
        let answer = cut_call_answer(snapshot.config.model.max_output_tokens);
        tracing::warn!(
            calls = tool_calls.len(),
            "the model's reply was cut at the output limit; its tool calls are not run"
        );
        for call in tool_calls {
            self.sink.emit(&Event::ToolResult {
                id: call.id.clone(),
                name: call.name.clone(),
                ok: false,
                output: answer.clone(),
            });
            self.session.push(Message::tool(call.id.clone(), answer.clone()));
        }
        self.end_step(snapshot).await
    }

    /// The model call. Its request is made once, of the history as it is sent now: estimated,
    /// then sent — unless the estimate is past the compaction trigger, when the session is
    /// compacted first and the request made anew. A request the endpoint refuses as too long
    /// is compacted, made anew and sent once more.
    async fn call_model(
        &mut self,
        snapshot: &Snapshot,
        prepared: &Prepared,
        iteration: u32,
    ) -> Result<ModelReply, TurnError> {
        let (mut may_compact, mut may_resend) = (true, snapshot.config.compaction.enabled);
        loop {
            let budget = self.host.budget();
            let (stored, encodings, account) = self.session.for_model_call();
            let model = self.child.as_ref().and_then(|child| child.link.model.as_deref());
            let request = model_request(stored, prepared, model);
            let context = estimate(account, budget, &request, stored);
            if std::mem::take(&mut may_compact) && compact::due(snapshot, budget, context.prompt_tokens) {
                self.compact(snapshot, Reason::Threshold).await?;
                continue;
            }
            self.sink.emit(&Event::ModelRequest {
                iteration,
                tools: request.tools.len(),
                messages: request.history.len() + request.injected.len() + 1,
                context,
            });
            self.end.meter.model_call_made();
            let sink = self.sink;
            let mut on_text = |text: &str| sink.emit(&Event::AssistantDelta { text: text.to_owned() });
            let span = telemetry::chat(request.model.unwrap_or(&self.host.config().model.model));
            let sent =
                self.host.model().complete(&request, encodings, &mut on_text).instrument(span.clone()).await;
            match &sent {
                Ok(reply) => {
                    let usage = reply.usage.as_ref().map(|usage| (usage.input_tokens, usage.output_tokens));
                    telemetry::chat_replied(&span, usage, reply.stop.finish_reason());
                    telemetry::chat_said(&span, &reply.text);
                }
                Err(error) => telemetry::failed(&span, error.kind()),
            }
            let error = match sent {
                Ok(reply) => return Ok(self.replied(reply, context.prompt_tokens)),
                Err(error) => self.keep_what_streamed(error, context.prompt_tokens),
            };
            // Plugin state changed while preparing (injected-message bookkeeping) is kept; the
            // failed call itself left nothing but what it streamed.
            self.end_step(snapshot).await?;
            if matches!(error, ModelError::ContextTooLong { .. })
                && std::mem::take(&mut may_resend)
                && self.compact(snapshot, Reason::ContextTooLong).await?
            {
                tracing::warn!(%error, "the endpoint refused the request as too long; compacted, sending it once more");
                continue;
            }
            return Err(error.into());
        }
    }

    /// A reply arrived to a request estimated at `prompt_tokens`: counted, and charged.
    fn replied(&mut self, reply: ModelReply, prompt_tokens: u64) -> ModelReply {
        self.session.count_model_call();
        self.session.context_mut().replied(reply.usage.as_ref());
        self.charge(reply.usage, prompt_tokens, [&reply.reasoning, &reply.text], &reply.tool_calls);
        reply
    }

    /// Compacts the session for `reason`; whether a new view was committed.
    async fn compact(&mut self, snapshot: &Snapshot, reason: Reason) -> Result<bool, TurnError> {
        let compactor = Compactor {
            snapshot,
            tokens: self.host.budget(),
            ctx: &self.ctx,
            store: &*self.store,
            sink: self.sink,
        };
        let beside = self.session.context().beside_history().unwrap_or_default();
        let outcome = compactor.run(self.session, reason, beside).await?;
        if let CompactOutcome::Unchanged(why) = &outcome {
            tracing::info!(%why, reason = reason.as_str(), "a compaction was due but changed nothing");
        }
        Ok(matches!(outcome, CompactOutcome::Compacted(_)))
    }

    /// A reply that broke off after part of it streamed keeps that part, as a reply of its
    /// own (text only: a call in it may be cut short), so that neither the operator nor a
    /// resumed session loses it.
    fn keep_what_streamed(&mut self, error: ModelError, prompt_tokens: u64) -> ModelError {
        let ModelError::Cut { detail, partial } = error else { return error };
        if partial.text.is_empty() && partial.reasoning.is_empty() {
            return ModelError::Cut { detail, partial };
        }
        let usage = partial.usage;
        let report = ReplyReport {
            text: &partial.text,
            tool_calls: &[],
            stop: ReplyStop::BrokenOff,
            usage,
            reasoning: &partial.reasoning,
        };
        self.sink.emit(&report.event());
        self.session.count_model_call();
        self.session.context_mut().replied(usage.as_ref());
        self.charge(usage, prompt_tokens, [&partial.reasoning, &partial.text], &[]);
        self.session.push_reply(Message::assistant(partial.text.clone(), Vec::new()), usage);
        ModelError::Cut { detail, partial }
    }

    /// Charges the turn for a reply (its reasoning and text, its calls) to a request estimated
    /// at `prompt_tokens`: what the endpoint `reported`, else that estimate and the reply as
    /// counted, which the session keeps too, so that its budget (`meter.session`) holds
    /// against an endpoint that reports nothing.
    fn charge(
        &mut self,
        reported: Option<TokenUsage>,
        prompt_tokens: u64,
        said: [&str; 2],
        calls: &[ToolCall],
    ) {
        let (budget, account) = (self.host.budget(), self.session.context());
        let charge = Charge::of(reported, || {
            let reply = Message::assistant(said.concat(), calls.to_vec());
            TokenUsage {
                input_tokens: prompt_tokens,
                output_tokens: account.tokens_of(budget, &reply),
                ..TokenUsage::default()
            }
        });
        self.end.meter.replied(charge);
        if charge.estimated {
            EstimatedUsage::add(self.session.bag(), charge.usage);
        }
    }

    /// `session-start` hooks, once per new session; their context goes into the history.
    async fn session_start(&mut self, snapshot: &Snapshot) {
        let hooks = snapshot.plugins.plugins().iter().filter(|p| p.implements(Exports::SESSION_START));
        for plugin in hooks {
            let context = heard(self.sink, plugin, plugin.session_start(&self.ctx, self.session.bag()).await);
            if let Some(context) = context.flatten().filter(|c| !c.trim().is_empty()) {
                self.session.push(Message::system(context));
            }
        }
    }

    /// `user-prompt-submit` hooks, then the prompt into the history. `Some` when blocked.
    async fn submit_prompt(&mut self, snapshot: &Snapshot, prompt: &str) -> Option<TurnEnd> {
        let mut contexts = Vec::new();
        let hooks = snapshot.plugins.plugins().iter().filter(|p| p.implements(Exports::USER_PROMPT_SUBMIT));
        for plugin in hooks {
            let submitted = plugin.user_prompt_submit(&self.ctx, self.session.bag(), prompt).await;
            let Some(outcome) = heard(self.sink, plugin, submitted) else { continue };
            if let Some(reason) = outcome.block {
                self.sink.emit(&Event::PromptBlocked { plugin: plugin.name().to_owned(), reason });
                return Some(TurnEnd::Blocked);
            }
            contexts.extend(outcome.context);
        }
        self.sink.emit(&Event::UserMessage { text: prompt.to_owned() });
        self.session.push(Message::user(prompt));
        for context in contexts {
            self.session.push(Message::system(context));
        }
        None
    }

    /// The deployment's `[agent]` settings as this turn is held to them: a child's narrowed.
    fn caps(&self, snapshot: &Snapshot) -> crate::config::AgentConfig {
        match &self.child {
            Some(child) => child.narrow(&snapshot.config.agent),
            None => snapshot.config.agent.clone(),
        }
    }

    /// The cap the turn has reached, reading its plugins' model calls up to now.
    /// Also refreshes what the plugin calls that follow read of the meter.
    fn spent(&mut self, agent: &crate::config::AgentConfig) -> Option<TurnEnd> {
        self.count_plugin_tokens();
        self.ctx.meter = self.end.meter.reading(agent, self.session);
        self.end.meter.exhausted(agent)
    }

    /// The tokens the turn's plugin calls have spent so far, into its meter.
    fn count_plugin_tokens(&mut self) {
        let plugins = self.ctx.model.as_ref().map_or(0, |model| model.0.tokens_spent());
        self.end.meter.plugins_spent(plugins);
    }

    /// Ends a step on `snapshot`'s plugins (see [`LiveSession::end_step`]).
    async fn end_step(&mut self, snapshot: &Snapshot) -> Result<(), TurnError> {
        Ok(self.session.end_step(&snapshot.plugins, &self.ctx, self.sink, &*self.store).await?)
    }
}

/// The estimate of `request`, made of `stored`'s history as it is sent now.
fn estimate(
    account: &mut ContextAccount,
    budget: &TokenBudget,
    request: &ModelRequest<'_>,
    stored: &Session,
) -> ContextEstimate {
    // A resumed session's last usage is at a position of the stored history; once a view
    // sends something else, only a reply from this process calibrates the estimate.
    let last_usage = stored.last_usage().filter(|_| stored.view().is_none());
    let context = account.estimate(budget, request, last_usage);
    if let Some(window) = context.window.filter(|&window| context.estimated_tokens > window) {
        tracing::warn!(
            estimated = context.estimated_tokens,
            window,
            "the next request may not fit the model's context window"
        );
    }
    context
}

/// The request of `prepared` with `session`'s history as it is sent, to `model` when a child
/// names its own.
fn model_request<'a>(
    session: &'a Session,
    prepared: &'a Prepared,
    model: Option<&'a str>,
) -> ModelRequest<'a> {
    ModelRequest {
        session_id: session.id(),
        system: &prepared.system,
        history: session.to_send(),
        injected: &prepared.injected,
        tools: &prepared.tools,
        max_output_tokens: None,
        model,
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

/// How a turn's end is named on the wire (`max_iterations`).
pub(in crate::agent) fn end_name(end: TurnEnd) -> String {
    serde_json::to_value(end).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}
