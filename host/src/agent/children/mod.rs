//! Child agents (contract 0.2.8): sessions a plugin granted `agents = true` starts from a
//! tool call. A child is a real session of the deployment, linked to its parent
//! (`records.rs`), narrowed by what started it: only the tools its start named (never one
//! its parent lacked), its own system prompt, model and turn limit, and every call it makes
//! decided by its parent's hooks too, as the parent stood when the child started. The
//! requests a call makes (`service.rs`) are applied once it returns; the children run at
//! the end of the reply's tool calls, all at once, and the parent's turn waits for them,
//! counting their tokens and time (`run.rs`); an operator may cancel one alone
//! (`running.rs`). A parent whose turn a crash cut short runs the children its dangling calls
//! wait for before it goes on.

mod records;
mod run;
mod running;
mod service;
mod sink;

pub use records::{ChildLink, ChildRecord};
pub(in crate::agent) use records::{children, depth};
pub(in crate::agent) use run::{Parent, apply, resume, run_pending};
pub use running::RunningChildren;
pub(in crate::agent) use service::CallAgents;

use super::tool_call::approval::AgentLabel;
use super::{Host, LiveSession, TurnError};
use crate::config::AgentConfig;
use crate::state::StateBag;

/// The child agents a session's bag records, by session id, in the order they were started:
/// what a front end reads of a session as the store has it, without opening it (a turn may
/// hold it).
pub fn recorded_children(bag: &StateBag) -> Vec<(String, ChildRecord)> {
    children(bag)
}

/// The parent a session's bag records (its session id, the child's agent name), when it is a
/// child agent's.
pub fn recorded_parent(bag: &StateBag) -> Option<(String, String)> {
    ChildLink::of(bag).map(|link| (link.parent_id, link.name))
}

/// A session above a child, as the child's calls are checked against it.
#[derive(Clone)]
pub struct Ancestor {
    pub session_id: String,
    /// Its bag as it stood when the child's turn began, detached: what its hooks read.
    pub bag: StateBag,
}

/// What a child's tool calls carry: its name for the operator, and the sessions above it.
pub struct ChildOf {
    pub label: AgentLabel,
    /// Its parent first, then the parent's parent.
    pub ancestors: Vec<Ancestor>,
}

/// What narrows one turn of a child's session beyond its link: what is left of its
/// parent's turn when the parent runs it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParentCaps {
    pub tokens_left: Option<u64>,
    pub secs_left: Option<u64>,
}

/// A child session's turn: its link, who it answers to, and its parent's caps.
pub struct ChildTurn {
    pub link: ChildLink,
    pub of: ChildOf,
    pub caps: ParentCaps,
}

impl ChildTurn {
    /// The deployment's `[agent]` settings as this child's turn is held to them: its turn
    /// limit, and no more tokens or time than its parent has left.
    pub fn narrow(&self, agent: &AgentConfig) -> AgentConfig {
        let tighter = |own: Option<u64>, parent: Option<u64>| match (own, parent) {
            (Some(own), Some(parent)) => Some(own.min(parent)),
            (own, parent) => own.or(parent),
        };
        AgentConfig {
            max_iterations: self
                .link
                .max_turns
                .map_or(agent.max_iterations, |turns| turns.min(agent.max_iterations)),
            max_turn_tokens: tighter(agent.max_turn_tokens, self.caps.tokens_left),
            max_turn_secs: tighter(agent.max_turn_secs, self.caps.secs_left),
            ..agent.clone()
        }
    }
}

/// The turn an operator gives a child's session directly (a message to a child): narrowed by
/// its link, decided by its ancestors' hooks as they are stored now, with no parent's caps.
/// `None` for a session that is nobody's child.
pub(in crate::agent) fn own_turn(host: &Host, session: &LiveSession) -> Result<Option<ChildTurn>, TurnError> {
    let Some(link) = ChildLink::of(session.bag()) else { return Ok(None) };
    let mut ancestors = Vec::new();
    let mut above = Some(link.parent_id.clone());
    while let Some(id) = above.take() {
        let Some(stored) = host.sessions().store().load(&id)? else { break };
        let bag = StateBag::from_entries(stored.state);
        above = ChildLink::of(&bag).map(|link| link.parent_id);
        ancestors.push(Ancestor { session_id: id, bag });
    }
    let label = AgentLabel { name: link.name.clone(), session_id: session.id().to_owned() };
    Ok(Some(ChildTurn { link, of: ChildOf { label, ancestors }, caps: ParentCaps::default() }))
}
