//! What the client said in `initialize` that it takes beyond the protocol's baseline: updates
//! an agent may send only to a client that asked for them.

use agent_client_protocol::v1::schema::ClientCapabilities;

#[derive(Debug, Clone, Copy, Default)]
pub struct Takes {
    /// `compaction_update`s (its `session.compaction` capability).
    pub compaction: bool,
    /// Child agents as sessions of their own, each announced with `subagent_update` on its
    /// parent's session; without it they are folded into the tool call that started them.
    pub child_sessions: bool,
}

impl Takes {
    pub fn of(capabilities: &ClientCapabilities) -> Self {
        Self {
            compaction: capabilities.session.as_ref().is_some_and(|session| session.compaction.is_some()),
            // `subagents` is the protocol's own word for the capability, not a plugin's name.
            child_sessions: capabilities.subagents.is_some(),
        }
    }
}
