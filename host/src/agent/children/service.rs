//! What a tool call's `agents` import does (contract 0.2.8): it checks each request against
//! the deployment's caps and the parent's tools, and records it. Nothing runs during the
//! call: the turn applies the requests once the call has returned (`apply`), and runs the
//! children at the end of the reply's tool calls (`run`).

use std::sync::{Arc, Mutex};

use super::records::ChildRecord;
use crate::events::AgentState;
use crate::runtime::host_api::{AgentService, AgentSpec, AgentStatus};
use crate::unpoisoned::LockUnpoisoned as _;

/// One request of a call, applied after it.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Start { id: String, plugin: String, spec: AgentSpec },
    Wait { id: String },
    Send { id: String, message: String },
    Cancel { id: String },
}

/// What one tool call may do with its session's children.
pub struct CallAgents {
    /// The session's depth (0 unless it is a child itself).
    pub depth: u32,
    pub max_depth: u32,
    pub max_parallel: u32,
    /// The tools the session is offered on this call: a child gets none beyond them. Shared
    /// by the calls of one reply.
    pub offered: Arc<[String]>,
    /// The session's children as the call started.
    pub known: Vec<(String, ChildRecord)>,
    requests: Mutex<Vec<Request>>,
}

impl CallAgents {
    pub fn new(
        depth: u32,
        caps: (u32, u32),
        offered: Arc<[String]>,
        known: Vec<(String, ChildRecord)>,
    ) -> Arc<Self> {
        let (max_depth, max_parallel) = caps;
        Arc::new(Self { depth, max_depth, max_parallel, offered, known, requests: Mutex::new(Vec::new()) })
    }

    /// What the call asked for, in order.
    pub fn take_requests(&self) -> Vec<Request> {
        std::mem::take(&mut *self.requests.lock_unpoisoned())
    }

    fn started_here(&self) -> Vec<(String, String)> {
        self.requests
            .lock_unpoisoned()
            .iter()
            .filter_map(|request| match request {
                Request::Start { id, spec, .. } => Some((id.clone(), spec.name.clone())),
                _ => None,
            })
            .collect()
    }

    fn known(&self, id: &str) -> Option<&ChildRecord> {
        self.known.iter().find(|(known, _)| known == id).map(|(_, record)| record)
    }

    fn exists(&self, id: &str) -> Result<(), String> {
        if self.known(id).is_some() || self.started_here().iter().any(|(started, _)| started == id) {
            Ok(())
        } else {
            Err(format!("no child agent `{id}` of this session"))
        }
    }

    fn record(&self, request: Request) {
        self.requests.lock_unpoisoned().push(request);
    }
}

impl AgentService for CallAgents {
    fn start(&self, plugin: &str, spec: AgentSpec) -> Result<String, String> {
        let name = &spec.name;
        if name.trim().is_empty() || spec.prompt.trim().is_empty() {
            return Err("a child agent needs a name and a prompt".to_owned());
        }
        if self.depth + 1 > self.max_depth {
            return Err(format!(
                "agent `{name}` cannot start: child agents nest at most {} deep (`[agent] \
                 max_subagent_depth`), and this session is at depth {}",
                self.max_depth, self.depth
            ));
        }
        let waiting = self.known.iter().filter(|(_, record)| record.state == AgentState::Pending).count()
            + self.started_here().len();
        if waiting >= self.max_parallel as usize {
            return Err(format!(
                "agent `{name}` cannot start: at most {} child agents run at once (`[agent] \
                 max_parallel_subagents`), and {waiting} are starting",
                self.max_parallel
            ));
        }
        if let Some(tool) = spec.tools.iter().flatten().find(|tool| !self.offered.contains(tool)) {
            return Err(format!(
                "agent `{name}` names the tool `{tool}`, which this session is not offered: a child \
                 never gets a tool its parent lacks"
            ));
        }
        let id = crate::state::new_session_id();
        self.record(Request::Start { id: id.clone(), plugin: plugin.to_owned(), spec });
        Ok(id)
    }

    fn wait(&self, _plugin: &str, id: &str) -> Result<(), String> {
        self.exists(id)?;
        self.record(Request::Wait { id: id.to_owned() });
        Ok(())
    }

    fn status(&self, id: &str) -> Result<AgentStatus, String> {
        if let Some(record) = self.known(id) {
            return Ok(record.status(id));
        }
        let started = self.started_here().into_iter().find(|(started, _)| started == id);
        let (id, name) = started.ok_or_else(|| format!("no child agent `{id}` of this session"))?;
        Ok(AgentStatus { id, name, state: AgentState::Pending, answer: None })
    }

    fn send(&self, _plugin: &str, id: &str, message: String) -> Result<(), String> {
        self.exists(id)?;
        if message.trim().is_empty() {
            return Err("a message to a child agent needs text".to_owned());
        }
        self.record(Request::Send { id: id.to_owned(), message });
        Ok(())
    }

    fn cancel(&self, id: &str) -> Result<(), String> {
        self.exists(id)?;
        self.record(Request::Cancel { id: id.to_owned() });
        Ok(())
    }

    fn children(&self) -> Vec<AgentStatus> {
        let mut all: Vec<AgentStatus> = self.known.iter().map(|(id, record)| record.status(id)).collect();
        all.extend(self.started_here().into_iter().map(|(id, name)| AgentStatus {
            id,
            name,
            state: AgentState::Pending,
            answer: None,
        }));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::host_api::AgentContext;

    fn spec(name: &str, tools: Option<&[&str]>) -> AgentSpec {
        AgentSpec {
            name: name.into(),
            prompt: "look around".into(),
            system_prompt: None,
            tools: tools.map(|tools| tools.iter().map(|tool| (*tool).to_owned()).collect()),
            model: None,
            mode: None,
            max_turns: None,
            context: AgentContext::Fresh,
        }
    }

    fn agents(depth: u32) -> Arc<CallAgents> {
        CallAgents::new(depth, (2, 2), ["read_file".to_owned(), "grep".to_owned()].into(), Vec::new())
    }

    #[test]
    fn a_start_is_recorded_and_its_child_listed_as_pending() {
        let agents = agents(0);
        let id = agents.start("delegator", spec("explore", Some(&["grep"]))).unwrap();
        agents.wait("delegator", &id).unwrap();
        assert_eq!(agents.children().len(), 1);
        assert_eq!(agents.status(&id).unwrap().state, AgentState::Pending);
        let requests = agents.take_requests();
        assert!(matches!(&requests[0], Request::Start { id: started, .. } if *started == id));
        assert_eq!(requests[1], Request::Wait { id });
    }

    #[test]
    fn a_tool_the_parent_lacks_the_depth_and_the_parallel_cap_are_refused_by_name() {
        let error = agents(0).start("p", spec("explore", Some(&["grep", "run_command"]))).unwrap_err();
        assert!(error.contains("`run_command`") && error.contains("not offered"), "{error}");
        let error = agents(2).start("p", spec("explore", None)).unwrap_err();
        assert!(error.contains("max_subagent_depth") && error.contains("depth 2"), "{error}");
        let agents = agents(0);
        agents.start("p", spec("a", None)).unwrap();
        agents.start("p", spec("b", None)).unwrap();
        let error = agents.start("p", spec("c", None)).unwrap_err();
        assert!(error.contains("max_parallel_subagents") && error.contains("at most 2"), "{error}");
    }

    #[test]
    fn a_child_of_another_session_is_not_found() {
        let error = agents(0).wait("p", "someone-elses").unwrap_err();
        assert!(error.contains("no child agent `someone-elses`"), "{error}");
    }
}
