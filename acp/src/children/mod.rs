//! Child agents (the core's `subagent_*` events) as the client sees them, by what it said it
//! takes. A client that takes child sessions is told of each child on its parent's session
//! (`announce.rs`) and gets the child's own events under the child's session id, converted
//! as any session's are (an [`Updates`] of its own). Any other client sees each child folded
//! into the tool call that started it (`fold.rs`).
//!
//! Either way the call that started a child is in progress again while the child runs, and
//! ends with its answer: the core gave the call's result before its children ran (a
//! placeholder the child's answer replaces), and the client must not take that for the end.
//!
//! One registry per open session, kept across its turns: a turn that stops with children
//! still running (cancelled, failed) tells the client they were cancelled. (`session/cancel`
//! of a child's session id goes to the core, which stops that child alone.)

mod announce;
mod fold;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    ContentBlock, SessionUpdate, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};

pub use announce::awaiting;

use super::updates::Updates;
use agent_host::events::{AgentState, Event, EventSink as _};
use agent_host::unpoisoned::LockUnpoisoned as _;

#[derive(Default)]
pub struct Children {
    registry: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    /// The children whose turn runs, by session id: a client that takes child sessions is
    /// told of every one, grandchildren too; any other, of its session's own children only
    /// (a grandchild is a line of its parent's).
    running: HashMap<String, Child>,
    /// The calls that started children, by the session they are in and their id.
    calls: HashMap<(String, String), Call>,
}

struct Child {
    parent_id: String,
    agent: String,
    call_id: Option<String>,
    /// Its own events' way to the client, as a session of its own; none when folded.
    updates: Option<Arc<Updates>>,
}

/// A call that started children: each with its answer once it ended, and what is shown of
/// them when they are folded.
#[derive(Default)]
struct Call {
    children: Vec<(String, Option<Answer>)>,
    lines: fold::Lines,
}

struct Answer {
    ok: bool,
    text: String,
}

/// How a child's turn ended, as `subagent_ended` tells.
struct End<'a> {
    state: AgentState,
    answer: Option<&'a str>,
    tokens: u64,
}

impl Children {
    /// Takes a `subagent_*` event off the stream of `root`, the session this registry is
    /// for.
    pub fn emit(&self, root: &Updates, event: &Event) {
        match event {
            Event::SubagentStarted { session_id, parent_id, call_id, agent, prompt } => {
                self.started(root, session_id, parent_id, call_id.as_deref(), agent, prompt);
            }
            Event::SubagentEnded { session_id, state, answer, tokens, .. } => {
                let end = End { state: *state, answer: answer.as_deref(), tokens: *tokens };
                self.ended(root, session_id, end);
            }
            Event::Subagent { session_id, agent, event, .. } => {
                self.child_event(root, session_id, agent, event)
            }
            _ => {}
        }
    }

    /// The session running child `id` answers to, while it runs.
    pub fn parent_of(&self, id: &str) -> Option<String> {
        self.registry.lock_unpoisoned().running.get(id).map(|child| child.parent_id.clone())
    }

    /// The turn of `root` is over: a child still running was stopped with it (a cancelled
    /// turn drops its children's turns, and no `subagent_ended` comes), so it is cancelled.
    pub fn stopped(&self, root: &Updates) {
        let left: Vec<String> = self.registry.lock_unpoisoned().running.keys().cloned().collect();
        for id in left {
            self.ended(root, &id, End { state: AgentState::Cancelled, answer: None, tokens: 0 });
        }
    }

    fn started(
        &self,
        root: &Updates,
        id: &str,
        parent_id: &str,
        call_id: Option<&str>,
        agent: &str,
        prompt: &str,
    ) {
        let sessions = root.takes().child_sessions;
        if sessions {
            // Before any of the child's own traffic, as the protocol asks.
            root.send_to(parent_id, announce::started(id, agent, prompt));
        }
        let updates = sessions.then(|| Arc::new(root.for_child(id)));
        {
            let mut registry = self.registry.lock_unpoisoned();
            let child = Child {
                parent_id: parent_id.to_owned(),
                agent: agent.to_owned(),
                call_id: call_id.map(str::to_owned),
                updates,
            };
            registry.running.insert(id.to_owned(), child);
            if let Some(call_id) = call_id {
                let call = registry.calls.entry((parent_id.to_owned(), call_id.to_owned())).or_default();
                match call.children.iter_mut().find(|(child, _)| child == id) {
                    Some((_, answer)) => *answer = None,
                    None => call.children.push((id.to_owned(), None)),
                }
                if !sessions {
                    call.lines.push(&fold::started(agent, prompt));
                }
            }
        }
        if let Some(call_id) = call_id {
            // A call of a turn this connection did not see (a child a crash cut short, run
            // again before its parent's turn goes on) is announced first.
            let arguments = serde_json::json!({ "prompt": prompt });
            self.in_session(root, parent_id, |updates| updates.announce(call_id, agent, &arguments));
            self.show_call(root, parent_id, call_id);
        }
    }

    fn ended(&self, root: &Updates, id: &str, end: End<'_>) {
        let sessions = root.takes().child_sessions;
        let call = {
            let mut registry = self.registry.lock_unpoisoned();
            // One this connection never saw start (a child whose answer its session held
            // already, taken up after a crash) is not announced now.
            let Some(child) = registry.running.remove(id) else { return };
            if sessions {
                root.send_to(&child.parent_id, announce::ended(id, end.state, end.answer));
            }
            let Some(call_id) = child.call_id else { return };
            let key = (child.parent_id, call_id);
            let Some(call) = registry.calls.get_mut(&key) else { return };
            let agent = &child.agent;
            let text = match (end.state, end.answer) {
                (_, Some(answer)) => answer.to_owned(),
                (AgentState::Cancelled, None) => format!("agent `{agent}` was cancelled"),
                (_, None) => format!("agent `{agent}` ended without an answer"),
            };
            let ended = Answer { ok: end.state == AgentState::Done, text };
            if let Some((_, answer)) = call.children.iter_mut().find(|(child, _)| child == id) {
                *answer = Some(ended);
            }
            if !sessions {
                call.lines.push(&fold::ended(agent, end.state, end.tokens));
            }
            key
        };
        self.show_call(root, &call.0, &call.1);
    }

    fn child_event(&self, root: &Updates, id: &str, agent: &str, event: &Event) {
        if !root.takes().child_sessions {
            let Some(line) = fold::describe(agent, event) else { return };
            let call = {
                let mut registry = self.registry.lock_unpoisoned();
                let Some(child) = registry.running.get(id) else { return };
                let Some(call_id) = child.call_id.clone() else { return };
                let key = (child.parent_id.clone(), call_id);
                let Some(call) = registry.calls.get_mut(&key) else { return };
                call.lines.push(&line);
                key
            };
            self.show_call(root, &call.0, &call.1);
            return;
        }
        if matches!(
            event,
            Event::SubagentStarted { .. } | Event::Subagent { .. } | Event::SubagentEnded { .. }
        ) {
            // A grandchild: its own session, announced on its parent's, this child's.
            return self.emit(root, event);
        }
        let updates = self.registry.lock_unpoisoned().running.get(id).and_then(|child| child.updates.clone());
        let Some(updates) = updates else { return };
        match event {
            // A child's plan is its own; its modes and options are not the client's to switch
            // (no session mutation is granted a child), so they are not announced.
            Event::ViewChanged { view } => {
                let changed = updates.shown.lock_unpoisoned().changed(view);
                for update in changed.into_iter().filter(|update| matches!(update, SessionUpdate::Plan(_))) {
                    updates.send(update);
                }
            }
            _ => updates.emit(event),
        }
    }

    /// Tells the client where call `call_id` of session `session_id` stands: in progress
    /// while a child it started runs, then completed (failed when a child did not finish),
    /// with its children's sessions or lines, then their answers.
    fn show_call(&self, root: &Updates, session_id: &str, call_id: &str) {
        let sessions = root.takes().child_sessions;
        let fields = {
            let mut registry = self.registry.lock_unpoisoned();
            let key = (session_id.to_owned(), call_id.to_owned());
            let Some(call) = registry.calls.get(&key) else { return };
            let mut content: Vec<ToolCallContent> = Vec::new();
            if sessions {
                content.extend(call.children.iter().map(|(child, _)| announce::reference(child)));
            } else if let Some(lines) = call.lines.text() {
                content.push(ToolCallContent::from(ContentBlock::from(lines)));
            }
            let answers = call.children.iter().filter_map(|(_, answer)| answer.as_ref());
            content
                .extend(answers.map(|answer| ToolCallContent::from(ContentBlock::from(answer.text.clone()))));
            let status = if call.children.iter().any(|(_, answer)| answer.is_none()) {
                ToolCallStatus::InProgress
            } else if call.children.iter().all(|(_, answer)| answer.as_ref().is_some_and(|answer| answer.ok))
            {
                ToolCallStatus::Completed
            } else {
                ToolCallStatus::Failed
            };
            if status != ToolCallStatus::InProgress {
                registry.calls.remove(&key);
            }
            ToolCallUpdateFields::new().status(status).content(content)
        };
        let update = SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.to_owned(), fields));
        root.send_to(session_id, update);
    }

    /// Runs `then` on the updates of session `id`: `root`'s own, or a running child's.
    fn in_session(&self, root: &Updates, id: &str, then: impl FnOnce(&Updates)) {
        if id == root.session_id() {
            return then(root);
        }
        let updates = self.registry.lock_unpoisoned().running.get(id).and_then(|child| child.updates.clone());
        if let Some(updates) = updates {
            then(&updates);
        }
    }
}
