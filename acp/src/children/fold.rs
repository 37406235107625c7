//! A child agent as a client that takes no child sessions sees it: folded into the tool call
//! that started it, as lines of text — its start, the calls it makes, what is refused or
//! asked, what it says between calls, its end — then its answer. A grandchild's lines are
//! its parent's, their names joined (`explorer › helper`).
//!
//! Each line is escaped as an approval card is ([`one_line`]): the child's model writes
//! them, and the client shows them as they are.

use std::collections::VecDeque;

use agent_host::events::{AgentState, Event};
use agent_host::sanitize::one_line;

/// The lines a call keeps, the latest: a long-running child must not make each update of
/// its call (which carries them all) grow without end.
const KEPT_LINES: usize = 200;
/// The longest line, in characters: arguments or a reply may be a whole file.
const LINE_CHARS: usize = 240;

/// The lines of one call's children, oldest first.
#[derive(Debug, Default)]
pub struct Lines {
    kept: VecDeque<String>,
    left_out: usize,
}

impl Lines {
    pub fn push(&mut self, line: &str) {
        if self.kept.len() == KEPT_LINES {
            self.kept.pop_front();
            self.left_out += 1;
        }
        self.kept.push_back(clipped(line));
    }

    /// The lines as one text; none before the first.
    pub fn text(&self) -> Option<String> {
        if self.kept.is_empty() {
            return None;
        }
        let mut text = String::new();
        if self.left_out > 0 {
            text.push_str(&format!("({} earlier lines left out)\n", self.left_out));
        }
        text.push_str(&Vec::from(self.kept.clone()).join("\n"));
        Some(text)
    }
}

/// Agent `path` starts a turn with `prompt`.
pub fn started(path: &str, prompt: &str) -> String {
    format!("{path} started: {prompt}")
}

/// Agent `path`'s turn is over.
pub fn ended(path: &str, state: AgentState, tokens: u64) -> String {
    let how = match state {
        AgentState::Failed => "failed",
        AgentState::Cancelled => "was cancelled",
        AgentState::Done | AgentState::Pending | AgentState::Running => "is done",
    };
    format!("{path} {how} ({tokens} tokens)")
}

/// The line event `event` of agent `path` makes; none for what the client needs not see
/// (deltas, requests, a call's success, which its call line already told).
pub fn describe(path: &str, event: &Event) -> Option<String> {
    let line = match event {
        Event::ToolCall { name, arguments, refused: false, .. } => format!("{path} → {name} {arguments}"),
        Event::ToolCall { name, arguments, refused: true, .. } => {
            format!("{path} ✗ {name} {arguments} (refused)")
        }
        Event::ToolResult { name, ok: false, output, .. } => format!("{path} ✗ {name}: {output}"),
        Event::ApprovalRequested { name, reason, .. } => format!("{path} asks to run {name}: {reason}"),
        // Its final reply is its answer, shown after the lines; only what it says on its way.
        Event::AssistantMessage { text, tool_calls, .. }
            if !text.trim().is_empty() && !tool_calls.is_empty() =>
        {
            format!("{path}: {text}")
        }
        Event::Error { message, .. } => format!("{path}: error: {message}"),
        Event::SubagentStarted { agent, prompt, .. } => started(&format!("{path} › {agent}"), prompt),
        Event::SubagentEnded { agent, state, tokens, .. } => {
            ended(&format!("{path} › {agent}"), *state, *tokens)
        }
        Event::Subagent { agent, event, .. } => return describe(&format!("{path} › {agent}"), event),
        _ => return None,
    };
    Some(line)
}

fn clipped(line: &str) -> String {
    let line = one_line(line.trim());
    if line.chars().count() <= LINE_CHARS {
        return line.into_owned();
    }
    let mut clipped: String = line.chars().take(LINE_CHARS - 1).collect();
    clipped.push('…');
    clipped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, refused: bool) -> Event {
        Event::ToolCall {
            id: "c1".into(),
            name: name.into(),
            plugin: "p".into(),
            arguments: serde_json::json!({"text": "hi"}),
            refused,
        }
    }

    #[test]
    fn a_grandchilds_events_are_named_by_the_path_of_agents() {
        let nested = Event::Subagent {
            session_id: "g".into(),
            parent_id: "c".into(),
            agent: "helper".into(),
            event: Box::new(call("echo", false)),
        };
        assert_eq!(describe("explorer", &nested).unwrap(), r#"explorer › helper → echo {"text":"hi"}"#);
        assert_eq!(
            describe("explorer", &call("rm", true)).unwrap(),
            r#"explorer ✗ rm {"text":"hi"} (refused)"#
        );
        let delta = Event::AssistantDelta { text: "x".into() };
        assert_eq!(describe("explorer", &delta), None);
    }

    #[test]
    fn lines_are_escaped_clipped_and_the_oldest_dropped_past_the_cap() {
        let mut lines = Lines::default();
        lines.push("a\u{202e}b\nc");
        assert_eq!(lines.text().unwrap(), r"a\u{202e}b\nc");
        lines.push(&"x".repeat(1000));
        assert!(lines.text().unwrap().ends_with('…'));
        for n in 0..KEPT_LINES {
            lines.push(&n.to_string());
        }
        let text = lines.text().unwrap();
        assert!(text.starts_with("(2 earlier lines left out)\n0\n"), "{text}");
        assert_eq!(text.lines().count(), KEPT_LINES + 1);
    }
}
