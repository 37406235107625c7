//! The `agents` import's stand-in: a session's children kept as the host would keep them
//! (started pending, cancelled unless over, sent back to pending), every call recorded, and
//! what `start` answers scriptable. No child ever runs: a test says how one ended with
//! [`finish_agent`].

use super::with;
use crate::agents::{AgentSpec, AgentState, AgentStatus};

/// An `agents` call a plugin made, in the order made.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentCall {
    Start(AgentSpec),
    Wait(String),
    Status(String),
    Send { id: String, message: String },
    Cancel(String),
    Children,
}

/// What answers `agents::start` instead of the stand-in's own `child-N` ids: the new
/// child's id, or the host's refusal.
pub type AgentStartStandIn = fn(&AgentSpec) -> Result<String, String>;

/// The session's children and the calls made about them.
#[derive(Default)]
pub(super) struct Children {
    calls: Vec<AgentCall>,
    children: Vec<AgentStatus>,
    start: Option<AgentStartStandIn>,
}

/// Answers `agents::start` with `answer` from now on (until the reset); an id it gives
/// becomes a pending child.
pub fn on_agent_start(answer: AgentStartStandIn) {
    with(|session| session.agents.start = Some(answer));
}

/// The `agents` calls made since the last take (or the reset), refused ones included.
pub fn take_agent_calls() -> Vec<AgentCall> {
    with(|session| std::mem::take(&mut session.agents.calls))
}

/// Child `id`'s turn ended in `state` with `answer`, as the host would record it.
///
/// # Panics
/// When the session has no child `id`: the test's own mistake.
pub fn finish_agent(id: &str, state: AgentState, answer: Option<&str>) {
    with(|session| {
        let child = session.agents.children.iter_mut().find(|child| child.id == id);
        let child = child.unwrap_or_else(|| panic!("no child `{id}` was started"));
        child.state = state;
        child.answer = answer.map(str::to_owned);
    });
}

/// The stand-in's answer to a call about child `id`, once recorded.
fn about<T>(call: AgentCall, id: &str, answer: impl FnOnce(&mut AgentStatus) -> T) -> Result<T, String> {
    with(|session| {
        session.agents.calls.push(call);
        match session.agents.children.iter_mut().find(|child| child.id == id) {
            Some(child) => Ok(answer(child)),
            None => Err(format!("the session has no child agent `{id}`")),
        }
    })
}

/// The imports' stand-ins, with the generated functions' signatures.
pub(crate) mod stand_in {
    use super::{AgentCall, about, with};
    use crate::agents::{AgentSpec, AgentState, AgentStatus};

    pub fn start(spec: &AgentSpec) -> Result<String, String> {
        let scripted = with(|session| {
            session.agents.calls.push(AgentCall::Start(spec.clone()));
            session.agents.start
        });
        let id = match scripted {
            Some(answer) => answer(spec)?,
            None => with(|session| format!("child-{}", session.agents.children.len() + 1)),
        };
        let child =
            AgentStatus { id: id.clone(), name: spec.name.clone(), state: AgentState::Pending, answer: None };
        with(|session| session.agents.children.push(child));
        Ok(id)
    }

    pub fn wait(id: &str) -> Result<(), String> {
        about(AgentCall::Wait(id.to_owned()), id, |_| ())
    }

    pub fn status(id: &str) -> Result<AgentStatus, String> {
        about(AgentCall::Status(id.to_owned()), id, |child| child.clone())
    }

    pub fn send(id: &str, message: &str) -> Result<(), String> {
        let call = AgentCall::Send { id: id.to_owned(), message: message.to_owned() };
        about(call, id, |child| {
            child.state = AgentState::Pending;
            child.answer = None;
        })
    }

    pub fn cancel(id: &str) -> Result<(), String> {
        about(AgentCall::Cancel(id.to_owned()), id, |child| {
            if !child.state.is_over() {
                child.state = AgentState::Cancelled;
            }
        })
    }

    pub fn children() -> Vec<AgentStatus> {
        with(|session| {
            session.agents.calls.push(AgentCall::Children);
            session.agents.children.clone()
        })
    }
}
