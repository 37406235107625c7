//! Where a child agent (contract 0.2.8) is: what its parent sees and `subagent_ended` says.

/// Where a child agent is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    /// Started, or sent a message, and waiting for its parent's step to end to run.
    Pending,
    /// Its turn is running.
    Running,
    /// Its last turn ended with a reply.
    Done,
    /// Its last turn failed.
    Failed,
    /// Cancelled before its turn ended.
    Cancelled,
}

impl AgentState {
    /// Whether it waits for its parent's step to end to run.
    pub fn is_pending(self) -> bool {
        self == Self::Pending
    }

    /// Whether its last turn is over, one way or another.
    pub fn is_over(self) -> bool {
        matches!(self, Self::Done | Self::Failed | Self::Cancelled)
    }

    /// Its name as events and the API spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AgentState;

    #[test]
    fn each_name_is_the_one_events_carry() {
        for state in [
            AgentState::Pending,
            AgentState::Running,
            AgentState::Done,
            AgentState::Failed,
            AgentState::Cancelled,
        ] {
            assert_eq!(serde_json::to_value(state).unwrap(), state.name());
        }
    }
}
