//! Child agents (contract 0.2.8) at the console: each drawn as a card under the call that
//! started it — a header (its name, its session id's first characters, its prompt's first
//! line), one line for each of its tool calls as it makes them, and an end line (done or
//! failed, its tokens, its answer's first line, the command that prints all of it).
//!
//! The console writes lines and never goes back up, and children run at once, so their lines
//! interleave: each carries its child's name, and a grandchild's card is indented under its
//! parent's. What each running child is doing now (thinking, its reply's last line, the call
//! it runs) changes too often for lines: it is the spinner's text instead ([`ChildCards::status`]).
//! Every string came from a model, a tool or a plugin, so each goes through
//! [`agent_host::sanitize`].

use agent_host::events::{AgentState, CallDecision, Event, thousands};
use agent_host::sanitize::one_line;

use super::view_lines::Colors;
use super::width::{fit, tail, width};
use super::{diff_lines, tool_cards};

/// Characters of a session id a card shows, its last ones: ids begin with the time they were
/// made, so children started together share their first characters and differ in their last.
/// What `/children` takes to name one.
pub const SHORT_ID: usize = 8;

/// Characters of a running child's latest words the spinner keeps.
const DOING: usize = 200;

/// The children whose turn runs, in the order they started, each with what it does now.
#[derive(Debug, Default)]
pub struct ChildCards {
    running: Vec<Running>,
}

#[derive(Debug)]
struct Running {
    session_id: String,
    name: String,
    /// The end of the reply streaming in, whose last line it is doing.
    said: String,
    doing: String,
}

/// `event` without its `subagent` wrappers: the name of the child it is of (the innermost
/// wrapper's), how many wrappers it had, and the child's own event.
pub fn unwrapped(event: &Event) -> (Option<&str>, usize, &Event) {
    let (mut agent, mut depth, mut inner) = (None, 0, event);
    while let Event::Subagent { agent: name, event, .. } = inner {
        agent = Some(name.as_str());
        depth += 1;
        inner = event;
    }
    (agent, depth, inner)
}

/// The last characters of a session id, as cards show it.
pub fn short_id(session_id: &str) -> String {
    let skip = session_id.chars().count().saturating_sub(SHORT_ID);
    one_line(&session_id.chars().skip(skip).collect::<String>()).into_owned()
}

impl ChildCards {
    /// The lines `event` adds to the cards, fitted to `columns`: none for an event of no child,
    /// or one that only changes what a child is doing.
    pub fn lines(&mut self, event: &Event, columns: usize, colors: &Colors) -> Vec<String> {
        let Colors { dim, warn, reset, .. } = colors;
        // A child's events come wrapped once, its start and end not: a grandchild's start is
        // wrapped once, in its parent's `subagent`.
        let (_, depth, inner) = unwrapped(event);
        let (session, name) = match event_of(event) {
            Some(found) => found,
            None => return Vec::new(),
        };
        // A card sits one step in from what started it: a child's own events (wrapped once)
        // line up under its header (not wrapped), a grandchild's one step further in.
        let card = |level: usize, mark: &str, text: &str| {
            let gutter = format!("{}{mark} ", "  ".repeat(level));
            format!("{gutter}{}", fit(text, columns.saturating_sub(width(&gutter)).max(1)))
        };
        let named = one_line(name);
        match inner {
            Event::SubagentStarted { session_id, agent, prompt, .. } => {
                self.start(session_id, agent);
                let prompt = first_line(prompt).unwrap_or_else(|| "(goes on with its turn)".to_owned());
                vec![card(
                    depth + 1,
                    "╭",
                    &format!("{} · {} · {prompt}", one_line(agent), short_id(session_id)),
                )]
            }
            Event::SubagentEnded { session_id, agent, state, answer, tokens, .. } => {
                self.running.retain(|child| child.session_id != *session_id);
                let answer = answer.as_deref().and_then(first_line).unwrap_or_default();
                let how = match state {
                    AgentState::Done => format!("done · {} tokens", thousands(*tokens)),
                    AgentState::Failed => "failed".to_owned(),
                    AgentState::Cancelled => "cancelled".to_owned(),
                    AgentState::Pending | AgentState::Running => "stopped".to_owned(),
                };
                let tone = if *state == AgentState::Done { "" } else { *warn };
                let shows = format!("/children {}", short_id(session_id));
                let line = card(depth + 1, "╰", &format!("{} {how} · {answer}", one_line(agent)));
                vec![
                    format!("{tone}{line}{reset}"),
                    format!("{dim}{}{reset}", card(depth + 1, " ", &format!("{shows} prints it whole"))),
                ]
            }
            own => {
                self.doing(session, own);
                let line = |text: String| card(depth, "│", &format!("{named} {text}"));
                match own {
                    Event::ToolCall { name: tool, arguments, .. } => {
                        vec![format!(
                            "{dim}{}{reset}",
                            line(format!("⏺ {}", tool_cards::call_line(tool, arguments, columns)))
                        )]
                    }
                    Event::ToolResult { ok: false, output, .. } => {
                        vec![format!(
                            "{warn}{}{reset}",
                            line(format!("  ⎿ ✗ {}", tool_cards::result_line(output, columns)))
                        )]
                    }
                    Event::ToolDecision {
                        name: tool,
                        decision: CallDecision::Deny,
                        reason,
                        decided_by,
                        ..
                    } => {
                        vec![format!(
                            "{warn}{}{reset}",
                            line(format!(
                                "⛔ {} refused by {}: {}",
                                one_line(tool),
                                one_line(decided_by),
                                one_line(reason)
                            ))
                        )]
                    }
                    Event::FileEdited { edit, .. } => {
                        vec![format!("{dim}{}{reset}", line(format!("✎ {}", diff_lines::summary(edit))))]
                    }
                    Event::Plugin { display: Some(display), .. } => first_line(display)
                        .map(|text| format!("{dim}{}{reset}", line(text)))
                        .into_iter()
                        .collect(),
                    Event::Error { message, .. } => {
                        vec![format!("{warn}{}{reset}", line(format!("error: {}", one_line(message))))]
                    }
                    _ => Vec::new(),
                }
            }
        }
    }

    /// What the running children do, for the spinner's line: the one that did something last,
    /// and how many run; `None` while none runs.
    pub fn status(&self) -> Option<String> {
        let latest = self.running.last()?;
        let others = match self.running.len() {
            1 => String::new(),
            n => format!("{n} agents · "),
        };
        Some(format!("{others}{}: {}", one_line(&latest.name), latest.doing))
    }

    /// Whether a child's turn runs.
    pub fn any_running(&self) -> bool {
        !self.running.is_empty()
    }

    /// Forgets every child: the parent's turn is over, so none of its children still runs.
    pub fn clear(&mut self) {
        self.running.clear();
    }

    fn start(&mut self, session_id: &str, name: &str) {
        self.running.retain(|child| child.session_id != session_id);
        self.running.push(Running {
            session_id: session_id.to_owned(),
            name: name.to_owned(),
            said: String::new(),
            doing: "starting".to_owned(),
        });
    }

    /// Notes what the child `session` does from its own `event`, and puts it last: the one the
    /// spinner shows.
    fn doing(&mut self, session: &str, event: &Event) {
        let Some(at) = self.running.iter().position(|child| child.session_id == session) else { return };
        let mut child = self.running.remove(at);
        match event {
            Event::ModelRequest { .. } => {
                child.said.clear();
                child.doing = "thinking".to_owned();
            }
            Event::AssistantDelta { text } => {
                child.said.push_str(text);
                // Only its last line is shown: the rest of a long reply need not be kept.
                if child.said.len() > 4 * DOING {
                    let mut cut = child.said.len() - 2 * DOING;
                    while !child.said.is_char_boundary(cut) {
                        cut += 1;
                    }
                    child.said.drain(..cut);
                }
                if let Some(last) = child.said.rsplit('\n').find(|line| !line.trim().is_empty()) {
                    child.doing = tail(&one_line(last.trim()), DOING);
                }
            }
            Event::ToolCall { name, arguments, .. } => {
                child.doing = format!("⏺ {}", tool_cards::call_line(name, arguments, DOING));
            }
            Event::ToolResult { ok, output, .. } => {
                let mark = if *ok { "✓" } else { "✗" };
                child.doing = format!("⎿ {mark} {}", tool_cards::result_line(output, DOING));
            }
            Event::ApprovalRequested { name, .. } => {
                child.doing = format!("waiting for your answer about {}", one_line(name));
            }
            _ => {}
        }
        self.running.push(child);
    }
}

/// The child an event of a card is of, as (its session id, its agent name): the started or
/// ended child itself, else the innermost wrapper's child.
fn event_of(event: &Event) -> Option<(&str, &str)> {
    let (_, _, inner) = unwrapped(event);
    match inner {
        Event::SubagentStarted { session_id, agent, .. } | Event::SubagentEnded { session_id, agent, .. } => {
            Some((session_id, agent))
        }
        _ => {
            let mut found = None;
            let mut at = event;
            while let Event::Subagent { session_id, agent, event, .. } = at {
                found = Some((session_id.as_str(), agent.as_str()));
                at = event;
            }
            found
        }
    }
}

/// The first line of `text` that says something, escaped; `None` when none does.
fn first_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|line| !line.is_empty()).map(|line| one_line(line).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Colors = Colors { dim: "", warn: "", reset: "", markdown: false };

    fn wrapped(session_id: &str, agent: &str, event: Event) -> Event {
        Event::Subagent {
            session_id: session_id.into(),
            parent_id: "parent".into(),
            agent: agent.into(),
            event: Box::new(event),
        }
    }

    fn started(session_id: &str, agent: &str, prompt: &str) -> Event {
        Event::SubagentStarted {
            session_id: session_id.into(),
            parent_id: "parent".into(),
            call_id: Some("call_1".into()),
            agent: agent.into(),
            prompt: prompt.into(),
        }
    }

    fn ended(session_id: &str, agent: &str, state: AgentState, answer: &str) -> Event {
        Event::SubagentEnded {
            session_id: session_id.into(),
            parent_id: "parent".into(),
            agent: agent.into(),
            state,
            answer: Some(answer.into()),
            tokens: 1234,
        }
    }

    fn call(name: &str, arguments: serde_json::Value) -> Event {
        Event::ToolCall { id: "c".into(), name: name.into(), plugin: "p".into(), arguments, refused: false }
    }

    #[test]
    fn a_child_is_a_card_with_its_header_its_calls_and_its_end() {
        let mut cards = ChildCards::default();
        let mut lines = |event: &Event| cards.lines(event, 80, &PLAIN);
        assert_eq!(
            lines(&started("0123456789abcdef", "explorer", "find the answer\nand more")),
            ["  ╭ explorer · 89abcdef · find the answer"]
        );
        let echo = wrapped("0123456789abcdef", "explorer", call("echo", serde_json::json!({"text": "hi"})));
        assert_eq!(lines(&echo), ["  │ explorer ⏺ echo  hi"]);
        let ok = Event::ToolResult { id: "c".into(), name: "echo".into(), ok: true, output: "hi".into() };
        assert!(lines(&wrapped("0123456789abcdef", "explorer", ok)).is_empty(), "its status says it");
        let delta = Event::AssistantDelta { text: "the answer".into() };
        assert!(lines(&wrapped("0123456789abcdef", "explorer", delta)).is_empty());
        assert_eq!(
            lines(&ended("0123456789abcdef", "explorer", AgentState::Done, "the answer is 42\nbecause")),
            ["  ╰ explorer done · 1,234 tokens · the answer is 42", "    /children 89abcdef prints it whole"]
        );
        assert!(lines(&call("echo", serde_json::json!({}))).is_empty(), "the parent's own call is no card's");
    }

    #[test]
    fn a_grandchild_is_indented_under_its_parent_and_a_failure_says_so() {
        let mut cards = ChildCards::default();
        let mut lines = |event: &Event| cards.lines(event, 60, &PLAIN);
        let grandchild = wrapped("child", "a", started("grand", "b", "go\x1b[2J"));
        assert_eq!(lines(&grandchild), ["    ╭ b · grand · go\\x1b[2J"]);
        let deep =
            wrapped("child", "a", wrapped("grand", "b", call("run", serde_json::json!({"command": "ls"}))));
        assert_eq!(lines(&deep), ["    │ b ⏺ run  ls"]);
        let failed = wrapped("child", "a", ended("grand", "b", AgentState::Failed, "agent `b` failed: boom"));
        assert_eq!(lines(&failed)[0], "    ╰ b failed · agent `b` failed: boom");
        let long = wrapped("child", "a", call("run", serde_json::json!({"command": "x".repeat(200)})));
        assert!(lines(&long).iter().all(|line| width(line) <= 60));
    }

    #[test]
    fn the_status_names_what_the_latest_running_child_does() {
        let mut cards = ChildCards::default();
        assert_eq!(cards.status(), None);
        cards.lines(&started("a1", "alpha", "one"), 80, &PLAIN);
        assert_eq!(cards.status().as_deref(), Some("alpha: starting"));
        cards.lines(&started("b1", "beta", "two"), 80, &PLAIN);
        cards.lines(
            &wrapped("a1", "alpha", Event::AssistantDelta { text: "first line\nsecond ".into() }),
            80,
            &PLAIN,
        );
        cards.lines(&wrapped("a1", "alpha", Event::AssistantDelta { text: "words".into() }), 80, &PLAIN);
        assert_eq!(cards.status().as_deref(), Some("2 agents · alpha: second words"));
        cards.lines(&wrapped("b1", "beta", call("echo", serde_json::json!({"text": "x"}))), 80, &PLAIN);
        assert_eq!(cards.status().as_deref(), Some("2 agents · beta: ⏺ echo  x"));
        cards.lines(&ended("b1", "beta", AgentState::Done, "B"), 80, &PLAIN);
        assert_eq!(cards.status().as_deref(), Some("alpha: second words"));
        assert!(cards.any_running());
        cards.clear();
        assert_eq!(cards.status(), None);
    }
}
