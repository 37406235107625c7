//! The `agents` import (since 0.2.8), its types converted to the host's
//! (`runtime::host_api::agents`), where the grant is checked.

use super::agent_host::plugin::agents as wit;
use crate::runtime::CallState;
use crate::runtime::host_api::{AgentContext, AgentSpec, AgentState, AgentStatus};

impl wit::Host for CallState {
    fn start(&mut self, spec: wit::AgentSpec) -> Result<String, String> {
        let context = match spec.context {
            wit::Context::Fresh => AgentContext::Fresh,
            wit::Context::Fork => AgentContext::Fork,
        };
        self.start_agent(AgentSpec {
            name: spec.name,
            prompt: spec.prompt,
            system_prompt: spec.system_prompt,
            tools: spec.tools,
            model: spec.model,
            mode: spec.mode,
            max_turns: spec.max_turns,
            context,
        })
    }

    fn wait(&mut self, id: String) -> Result<(), String> {
        self.wait_for_agent(&id)
    }

    fn status(&mut self, id: String) -> Result<wit::AgentStatus, String> {
        self.agent_status(&id).map(status)
    }

    fn send(&mut self, id: String, message: String) -> Result<(), String> {
        self.send_agent(&id, message)
    }

    fn cancel(&mut self, id: String) -> Result<(), String> {
        self.cancel_agent(&id)
    }

    fn children(&mut self) -> Vec<wit::AgentStatus> {
        self.child_agents().into_iter().map(status).collect()
    }
}

fn status(status: AgentStatus) -> wit::AgentStatus {
    wit::AgentStatus {
        id: status.id,
        name: status.name,
        state: match status.state {
            AgentState::Pending => wit::AgentState::Pending,
            AgentState::Running => wit::AgentState::Running,
            AgentState::Done => wit::AgentState::Done,
            AgentState::Failed => wit::AgentState::Failed,
            AgentState::Cancelled => wit::AgentState::Cancelled,
        },
        answer: status.answer,
    }
}
