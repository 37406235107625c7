//! `agents` (contract 0.2.8): child agents of the session a call serves, for a plugin granted
//! `agents = true`. The runtime knows no agent loop: whoever sets up the call hands it an
//! [`AgentService`], which records what the call asks for; the loop runs the children once
//! the call has returned.

use std::sync::Arc;

use crate::runtime::call::CallState;

/// What a child's history starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentContext {
    /// Its prompt alone.
    Fresh,
    /// A copy of its parent's history, then its prompt.
    Fork,
}

/// What a child is started with; every optional field narrows its parent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgentSpec {
    pub name: String,
    pub prompt: String,
    pub system_prompt: Option<String>,
    pub tools: Option<Vec<String>>,
    pub model: Option<String>,
    pub mode: Option<String>,
    pub max_turns: Option<u32>,
    pub context: AgentContext,
}

pub use crate::events::AgentState;

/// A child as its parent sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgentStatus {
    /// The child's session id.
    pub id: String,
    pub name: String,
    pub state: AgentState,
    /// Its last turn's final reply once done; the error once failed.
    pub answer: Option<String>,
}

/// The children a call may start and ask about, set up by the layer that runs them. Each
/// answer is an error text for the plugin when the request cannot be met.
pub trait AgentService: Send + Sync {
    /// Records a child to start once the call returns; its session id.
    fn start(&self, plugin: &str, spec: AgentSpec) -> Result<String, String>;

    /// Binds the calling tool call's result to child `id`'s final answer.
    fn wait(&self, plugin: &str, id: &str) -> Result<(), String>;

    fn status(&self, id: &str) -> Result<AgentStatus, String>;

    /// Records another turn of child `id` with `message`, run like a start.
    fn send(&self, plugin: &str, id: &str, message: String) -> Result<(), String>;

    fn cancel(&self, id: &str) -> Result<(), String>;

    /// The session's children, in the order they were started.
    fn children(&self) -> Vec<AgentStatus>;
}

/// What the `agents` import may do in one call: set when the plugin holds the grant, with
/// the service when the call runs for a session.
#[derive(Clone)]
pub struct AgentsGrant {
    /// `None` where no session is at hand (loading, `status`, a view).
    pub service: Option<Arc<dyn AgentService>>,
}

impl CallState {
    /// The service the call may use, or the error that says why it may not.
    fn agent_service(&self) -> Result<Arc<dyn AgentService>, String> {
        let name = &self.plugin.name;
        let Some(grant) = &self.agents else {
            return Err(format!(
                "plugin `{name}` may not start agents: grant it with `agents = true` under its \
                 [plugin.grants] in config.toml"
            ));
        };
        grant
            .service
            .clone()
            .ok_or_else(|| format!("plugin `{name}` may start and ask about agents only from a tool call"))
    }

    pub fn start_agent(&mut self, spec: AgentSpec) -> Result<String, String> {
        self.agent_service()?.start(&self.plugin.name, spec)
    }

    pub fn wait_for_agent(&mut self, id: &str) -> Result<(), String> {
        self.agent_service()?.wait(&self.plugin.name, id)
    }

    pub fn agent_status(&mut self, id: &str) -> Result<AgentStatus, String> {
        self.agent_service()?.status(id)
    }

    pub fn send_agent(&mut self, id: &str, message: String) -> Result<(), String> {
        self.agent_service()?.send(&self.plugin.name, id, message)
    }

    pub fn cancel_agent(&mut self, id: &str) -> Result<(), String> {
        self.agent_service()?.cancel(id)
    }

    /// The session's children; none without the grant or outside a session.
    pub fn child_agents(&mut self) -> Vec<AgentStatus> {
        self.agent_service().map(|service| service.children()).unwrap_or_default()
    }
}
