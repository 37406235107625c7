//! Child agents, for plugins granted `agents = true` (contract 0.2.8): real sessions of the
//! deployment that the calling session starts, narrower than itself (a system prompt of their
//! own, fewer tools, another model or mode, fewer model calls). A child starts once the call
//! that started it returns; a tool that calls [`wait`] hands its result over to the child's
//! final answer. Every refusal is an error saying why: the grant, `[agent]`'s caps on depth
//! and parallel children, a tool the parent is not offered, a call outside a session.

pub use crate::bindings::agent_host::plugin::agents::{AgentSpec, AgentState, AgentStatus, Context};
use crate::host::agents as raw;

impl AgentSpec {
    /// A child called `name` sent `prompt`, with everything else its parent's: the
    /// deployment's system prompt, every tool, the same model and mode, a fresh history.
    pub fn new(name: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            prompt: prompt.into(),
            system_prompt: None,
            tools: None,
            model: None,
            mode: None,
            max_turns: None,
            context: Context::Fresh,
        }
    }
}

impl Default for Context {
    /// The prompt alone: a child sees none of its parent's history unless forked.
    fn default() -> Self {
        Context::Fresh
    }
}

impl AgentState {
    /// Whether the child's last turn is over, one way or another.
    pub fn is_over(self) -> bool {
        matches!(self, AgentState::Done | AgentState::Failed | AgentState::Cancelled)
    }
}

/// Starts a child of the calling session; its session id.
pub fn start(spec: &AgentSpec) -> Result<String, String> {
    raw::start(spec)
}

/// From a tool call: the call's result becomes child `id`'s final answer once its turn ends
/// (or what ended it), in place of what the tool returns.
pub fn wait(id: &str) -> Result<(), String> {
    raw::wait(id)
}

/// Child `id`'s status now.
pub fn status(id: &str) -> Result<AgentStatus, String> {
    raw::status(id)
}

/// Another turn of child `id`, with `message` as its prompt, run like a start.
pub fn send(id: &str, message: &str) -> Result<(), String> {
    raw::send(id, message)
}

/// Cancels child `id`: one waiting to run never runs; a finished one stays as it is.
pub fn cancel(id: &str) -> Result<(), String> {
    raw::cancel(id)
}

/// The calling session's children, in the order they were started.
pub fn children() -> Vec<AgentStatus> {
    raw::children()
}
