//! A child agent as a client that takes child sessions is told of it: `subagent_update`s on
//! its parent's session (who it is, then where its work stands), and a reference to its
//! session in the tool call that started it.
//! Each child is announced cancellable (`capabilities.cancel`): the core stops a running
//! child alone, its parent's turn going on.

use agent_client_protocol::v1::schema::{
    Error, ErrorStopReason, IdleStateUpdate, IdleStopReason, RequiresActionStateUpdate, RunningStateUpdate,
    SessionCancelCapabilities, SessionReference, SessionUpdate, StateUpdate, SubagentSessionCapabilities,
    SubagentUpdate, ToolCallContent,
};

use agent_host::events::AgentState;

/// The longest description: the first line of the prompt, which may be a whole brief.
const DESCRIPTION_CHARS: usize = 200;

/// Announces child `id` (its first update) or starts its next turn: its agent name as the
/// title, the first line of its prompt as what it is for, running.
pub fn started(id: &str, agent: &str, prompt: &str) -> SessionUpdate {
    let cancellable = SubagentSessionCapabilities::new().cancel(SessionCancelCapabilities::new());
    let mut update =
        SubagentUpdate::new(id.to_owned()).title(agent.to_owned()).capabilities(cancellable).state(running());
    if let Some(description) = first_line(prompt) {
        update = update.description(description);
    }
    SessionUpdate::SubagentUpdate(update)
}

/// Child `id`'s turn is over: idle, with why it stopped (a failure's message as its error).
pub fn ended(id: &str, state: AgentState, answer: Option<&str>) -> SessionUpdate {
    let reason = match state {
        AgentState::Cancelled => IdleStopReason::Cancelled,
        AgentState::Failed => {
            let message = answer.unwrap_or("the agent failed").to_owned();
            IdleStopReason::Error(ErrorStopReason::new().error(Error::internal_error().data(message)))
        }
        // An end seen while it still counted as pending or running is the end of its turn.
        AgentState::Done | AgentState::Pending | AgentState::Running => IdleStopReason::EndTurn,
    };
    state_of(id, StateUpdate::Idle(IdleStateUpdate::new().stop_reason(reason)))
}

/// Child `id` waits for the person (a permission request of its own), or goes on again.
pub fn awaiting(id: &str, waiting: bool) -> SessionUpdate {
    let state =
        if waiting { StateUpdate::RequiresAction(RequiresActionStateUpdate::new()) } else { running() };
    state_of(id, state)
}

/// Child `id` as the content of the tool call that started it.
pub fn reference(id: &str) -> ToolCallContent {
    ToolCallContent::Session(SessionReference::new(id.to_owned()))
}

fn running() -> StateUpdate {
    StateUpdate::Running(RunningStateUpdate::new())
}

fn state_of(id: &str, state: StateUpdate) -> SessionUpdate {
    SessionUpdate::SubagentUpdate(SubagentUpdate::new(id.to_owned()).state(state))
}

fn first_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty())?;
    Some(line.chars().take(DESCRIPTION_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_names_the_agent_and_the_first_line_of_its_prompt_and_runs() {
        let value = serde_json::to_value(started("child-1", "explorer", "\n  find it\nthen more")).unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "sessionUpdate": "subagent_update",
                "sessionId": "child-1",
                "title": "explorer",
                "description": "find it",
                "capabilities": {"cancel": {}},
                "state": {"state": "running"}
            })
        );
    }

    #[test]
    fn an_end_is_idle_with_its_stop_reason_and_a_failure_carries_its_message() {
        let done = serde_json::to_value(ended("c", AgentState::Done, Some("42"))).unwrap();
        assert_eq!(done["state"], serde_json::json!({"state": "idle", "stopReason": "end_turn"}));
        let cancelled = serde_json::to_value(ended("c", AgentState::Cancelled, None)).unwrap();
        assert_eq!(cancelled["state"]["stopReason"], "cancelled");
        let failed = serde_json::to_value(ended("c", AgentState::Failed, Some("it broke"))).unwrap();
        assert_eq!(failed["state"]["stopReason"], "error");
        assert_eq!(failed["state"]["error"]["data"], "it broke");
    }
}
