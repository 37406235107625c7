//! A reply's tool calls, and the child agents they start (contract 0.2.8): the calls run in
//! order, each with the session's `agents` at hand; the children they started run at once
//! after the last of them, and a call that waits for a child gets its answer as its result.

use super::{Next, Turn};
use crate::agent::children::{self, CallAgents, ChildTurn, ParentCaps};
use crate::agent::tool_call::{self, ToolCallEnv};
use crate::agent::turn::prepare::Prepared;
use crate::agent::{Approver, Host, Snapshot, TurnError};
use crate::events::EventSink;
use crate::events::TurnEnd;
use crate::model::Message;
use crate::plugins::{AgentsAccess, CallContext};
use crate::tools::ToolCall;

impl Turn<'_, '_> {
    /// Runs the reply's tool calls and the children they started, and stores their results,
    /// as one step.
    pub(super) async fn run_tools(
        &mut self,
        snapshot: &Snapshot,
        prepared: &Prepared,
        tool_calls: &[ToolCall],
    ) -> Result<Next, TurnError> {
        let mut results = Vec::with_capacity(tool_calls.len());
        let mut unanswered_ask = false;
        let offered: std::sync::Arc<[String]> = prepared.tools.iter().map(|tool| tool.name.clone()).collect();
        let mut call_spans = Vec::new();
        for call in tool_calls {
            let agents = self.call_agents(snapshot, offered.clone());
            let ctx = CallContext { agents: Some(AgentsAccess(agents.clone())), ..self.ctx.clone() };
            let env = ToolCallEnv {
                snapshot,
                prepared,
                ctx: &ctx,
                bag: self.session.bag(),
                memo: self.session.provide_memo(),
                sink: self.sink,
                approver: self.approver,
                child: self.child.as_ref().map(|child| &child.of),
            };
            let report = tool_call::run(&env, call).await;
            unanswered_ask |= report.unanswered_ask;
            call_spans.push((call.id.clone(), report.span));
            results.push(Message::tool(call.id.clone(), report.result.output));
            self.session.bring_views(report.fresh_views);
            self.session.gather_views(&snapshot.plugins, self.sink).await;
            children::apply(self.host, self.session, &call.id, &offered, agents.take_requests()).await?;
        }
        if children::children(self.session.bag()).iter().any(|(_, record)| record.state.is_pending()) {
            // The reply and the records made durable before any child runs: a crash among
            // them leaves the calls unanswered and the children recorded, to be taken up.
            self.end_step(snapshot).await?;
            let parent = parent(
                self.host,
                self.sink,
                self.approver,
                &self.child,
                self.parent_caps(snapshot),
                &call_spans,
            );
            let ran = children::run_pending(&parent, self.session).await;
            self.end.meter.children_spent(ran.tokens);
            for (call, result) in ran.results {
                if let Some(message) =
                    results.iter_mut().find(|m| m.tool_call_id.as_deref() == Some(call.as_str()))
                {
                    message.content = result.output;
                }
            }
        }
        for result in results {
            self.session.push(result);
        }
        self.end_step(snapshot).await?;
        // An approval nobody could give ends the turn: the model must not keep retrying
        // what the operator has not seen.
        Ok(if unanswered_ask { Next::Stop(TurnEnd::Done) } else { Next::Continue })
    }

    /// Before a turn goes on: the children the last reply's unanswered calls wait for (a
    /// crash cut them short, or they never ran), run to their end, their answers the calls'
    /// results.
    pub(super) async fn resume_children(&mut self, snapshot: &Snapshot) -> Result<(), TurnError> {
        let parent =
            parent(self.host, self.sink, self.approver, &self.child, self.parent_caps(snapshot), &[]);
        let ran = children::resume(&parent, self.session).await;
        if ran.results.is_empty() {
            return Ok(());
        }
        self.end.meter.children_spent(ran.tokens);
        for (call, result) in ran.results {
            self.session.push(Message::tool(call, result.output));
        }
        self.end_step(snapshot).await
    }

    /// What one call may do with the session's children.
    fn call_agents(
        &self,
        snapshot: &Snapshot,
        offered: std::sync::Arc<[String]>,
    ) -> std::sync::Arc<CallAgents> {
        let agent = &snapshot.config.agent;
        CallAgents::new(
            children::depth(self.session.bag()),
            (agent.max_subagent_depth, agent.max_parallel_subagents),
            offered,
            children::children(self.session.bag()),
        )
    }

    /// What is left of this turn's caps, which the children it runs are held to.
    fn parent_caps(&self, snapshot: &Snapshot) -> ParentCaps {
        let caps = self.caps(snapshot);
        let secs = self.end.meter.elapsed().as_secs();
        ParentCaps {
            tokens_left: caps.max_turn_tokens.map(|cap| cap.saturating_sub(self.end.meter.tokens())),
            secs_left: caps.max_turn_secs.map(|cap| cap.saturating_sub(secs)),
        }
    }
}

/// A turn as the parent of the children it runs: what they report to and are held to.
fn parent<'a>(
    host: &'a Host,
    sink: &'a dyn EventSink,
    approver: &'a dyn Approver,
    child: &'a Option<ChildTurn>,
    caps: ParentCaps,
    call_spans: &'a [(String, tracing::Span)],
) -> children::Parent<'a> {
    let above = child.as_ref().map_or(&[][..], |child| child.of.ancestors.as_slice());
    children::Parent { host, sink, approver, above, caps, call_spans }
}
