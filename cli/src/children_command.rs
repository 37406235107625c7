//! `/children`: the session's child agents (contract 0.2.8), listed (number, name, state,
//! session id, answer) and, with a number or a session id (its last characters do, as a card
//! shows them), one child's whole transcript read from the store.
//!
//! A card at the console shows a child's calls a line each and its answer's first line, and
//! the console never redraws what it wrote, so a card cannot open in place: its transcript is
//! printed below instead, like `/show` prints a result whole. Going on talking with a child is
//! `--session ID`, which the listing says.

use agent_host::agent::{ChildLink, ChildRecord, Host, SessionHandle};
use agent_host::conversation::{Message, Role};
use agent_host::sanitize::{multi_line, one_line};
use agent_host::state::StateBag;

use super::child_cards::short_id;
use super::tool_cards;

/// Lines of a tool result a transcript shows; the rest is counted.
const RESULT_LINES: usize = 20;
/// Columns a call's line takes in a transcript (it is not fitted to the terminal: it is read
/// back, not watched).
const CALL_COLUMNS: usize = 160;

/// What `/children` answers (`Err` for what went wrong), `None` for any other line.
pub async fn children_command(
    line: &str,
    host: &Host,
    session: &SessionHandle,
) -> Option<Result<String, String>> {
    let argument = line.strip_prefix("/children")?;
    if !(argument.is_empty() || argument.starts_with(char::is_whitespace)) {
        return None;
    }
    let children = session.lock().await.children();
    let wanted = argument.trim();
    if wanted.is_empty() {
        return Some(Ok(listing(&children)));
    }
    let Some((id, record)) = find(&children, wanted) else {
        return Some(Err(format!(
            "no child agent `{}` in this session: /children lists them, by number and session id",
            one_line(wanted)
        )));
    };
    Some(match host.sessions().store().load(id) {
        Ok(Some(stored)) => {
            let link = ChildLink::of(&StateBag::from_entries(stored.state));
            Ok(transcript(id, record, link.as_ref(), &stored.history))
        }
        Ok(None) => Err(format!("the session of child {} is gone from the store", record.number)),
        Err(error) => Err(format!("the session of child {} cannot be read: {error}", record.number)),
    })
}

/// The child `wanted` names: its number, its session id, or the first or last characters of
/// one (when they name only one).
fn find<'a>(children: &'a [(String, ChildRecord)], wanted: &str) -> Option<(&'a str, &'a ChildRecord)> {
    if let Ok(number) = wanted.parse::<u32>()
        && let Some((id, record)) = children.iter().find(|(_, record)| record.number == number)
    {
        return Some((id, record));
    }
    let mut matching = children.iter().filter(|(id, _)| id.starts_with(wanted) || id.ends_with(wanted));
    match (matching.next(), matching.next()) {
        (Some((id, record)), None) => Some((id, record)),
        _ => None,
    }
}

/// One line per child: number, name, state, session id (whole, to be copied), the answer's
/// first line.
fn listing(children: &[(String, ChildRecord)]) -> String {
    if children.is_empty() {
        return "no child agents in this session yet".to_owned();
    }
    let mut lines = vec![
        "child agents of this session (/children N prints one's transcript; --session ID goes on with one):"
            .to_owned(),
    ];
    let name_width =
        children.iter().map(|(_, record)| one_line(&record.name).chars().count()).max().unwrap_or(0);
    for (id, record) in children {
        let answer =
            record.answer.as_deref().and_then(|answer| answer.lines().find(|l| !l.trim().is_empty()));
        let answer = answer.map(|answer| format!("  {}", cut(answer.trim(), 80))).unwrap_or_default();
        lines.push(format!(
            "  {:>2}  {:<name_width$}  {:<9}  {}{answer}",
            record.number,
            one_line(&record.name),
            record.state.name(),
            one_line(id),
        ));
    }
    lines.join("\n")
}

/// The child's history as it is stored, under what it was started with (its system prompt,
/// its tools, its model): its prompts, its replies whole, each call a line and each result's
/// first lines, escaped.
fn transcript(id: &str, record: &ChildRecord, link: Option<&ChildLink>, history: &[Message]) -> String {
    let head = format!(
        "── child {}: {} ({}) · session {} ──",
        record.number,
        one_line(&record.name),
        record.state.name(),
        one_line(id)
    );
    let mut lines = vec![head];
    if let Some(link) = link {
        let model =
            link.model.as_deref().map(|model| format!(" · model {}", one_line(model))).unwrap_or_default();
        lines.push(format!("tools: {}{model}", one_line(&link.tools.join(", "))));
        if let Some(prompt) = link.system_prompt.as_deref().filter(|prompt| !prompt.trim().is_empty()) {
            lines.push(format!("system prompt: {}", multi_line(prompt.trim())));
        }
    }
    for message in history {
        match message.role {
            Role::User => lines.push(format!("› {}", multi_line(message.content.trim()))),
            Role::Assistant => {
                if !message.content.trim().is_empty() {
                    lines.push(multi_line(message.content.trim()).into_owned());
                }
                for call in &message.tool_calls {
                    let arguments = serde_json::from_str(&call.arguments)
                        .unwrap_or_else(|_| serde_json::Value::String(call.arguments.clone()));
                    lines.push(format!("⏺ {}", tool_cards::call_line(&call.name, &arguments, CALL_COLUMNS)));
                }
            }
            Role::Tool => lines.extend(result_lines(&message.content)),
            Role::System => lines.push(format!("(system) {}", multi_line(message.content.trim()))),
        }
    }
    lines.push(format!(
        "── end of child {} ({}) · go on with it: --session {} ──",
        record.number,
        short_id(id),
        one_line(id)
    ));
    lines.join("\n")
}

/// A tool result under its call: its first [`RESULT_LINES`] lines, indented, and how many more.
fn result_lines(output: &str) -> Vec<String> {
    let all: Vec<&str> = output.trim_end().lines().collect();
    let mut lines: Vec<String> = all
        .iter()
        .take(RESULT_LINES)
        .enumerate()
        .map(|(at, line)| format!("{}{}", if at == 0 { "  ⎿ " } else { "    " }, one_line(line)))
        .collect();
    if lines.is_empty() {
        lines.push("  ⎿ (empty)".to_owned());
    }
    if all.len() > RESULT_LINES {
        lines.push(format!("    … {} more lines", all.len() - RESULT_LINES));
    }
    lines
}

/// `text` escaped on one line, cut after `max` characters.
fn cut(text: &str, max: usize) -> String {
    let line = one_line(text);
    match line.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_host::events::AgentState;
    use agent_host::tools::ToolCall;

    fn record(number: u32, name: &str, state: AgentState, answer: Option<&str>) -> ChildRecord {
        ChildRecord {
            number,
            name: name.into(),
            plugin: "delegator".into(),
            call_id: Some("call_1".into()),
            waited_by: Some("call_1".into()),
            state,
            answer: answer.map(Into::into),
            prompts: 1,
            next_prompt: None,
            mode: None,
        }
    }

    #[test]
    fn the_listing_gives_each_childs_number_name_state_id_and_answer() {
        assert_eq!(listing(&[]), "no child agents in this session yet");
        let children = vec![
            ("aaaa1111-x".to_owned(), record(1, "explorer", AgentState::Done, Some("\nfound it\nmore"))),
            ("bbbb2222-y".to_owned(), record(2, "fix", AgentState::Failed, None)),
        ];
        let shown = listing(&children);
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines[0].contains("/children N"), "{shown}");
        assert_eq!(lines[1], "   1  explorer  done       aaaa1111-x  found it");
        assert_eq!(lines[2], "   2  fix       failed     bbbb2222-y");
        assert_eq!(find(&children, "2").map(|(id, _)| id), Some("bbbb2222-y"));
        assert_eq!(find(&children, "aaaa").map(|(id, _)| id), Some("aaaa1111-x"));
        assert_eq!(find(&children, "2222-y").map(|(id, _)| id), Some("bbbb2222-y"), "its last characters");
        assert!(find(&children, "3").is_none() && find(&children, "c").is_none());
        let same = vec![children[0].clone(), ("aaaa3333".to_owned(), record(3, "x", AgentState::Done, None))];
        assert!(find(&same, "aaaa").is_none(), "a prefix two ids share names neither");
    }

    #[test]
    fn a_transcript_shows_the_prompt_replies_calls_and_results_escaped() {
        let call = ToolCall { id: "c1".into(), name: "echo".into(), arguments: r#"{"text":"hi"}"#.into() };
        let long: String = (1..=25).map(|n| format!("line {n}\n")).collect();
        let history = vec![
            Message::user("find it\x1b[2J"),
            Message::assistant("looking", vec![call]),
            Message::tool("c1", long),
            Message::assistant("the answer is 42", Vec::new()),
        ];
        let shown = transcript("aaaa1111-x", &record(1, "explorer", AgentState::Done, None), None, &history);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[0], "── child 1: explorer (done) · session aaaa1111-x ──");
        assert_eq!(lines[1], "› find it\\x1b[2J");
        assert_eq!(lines[2], "looking");
        assert_eq!(lines[3], "⏺ echo  hi");
        assert_eq!(lines[4], "  ⎿ line 1");
        assert_eq!(lines[23], "    line 20");
        assert_eq!(lines[24], "    … 5 more lines");
        assert_eq!(lines[25], "the answer is 42");
        assert!(lines[26].contains("--session aaaa1111-x"), "{shown}");
    }

    #[test]
    fn a_transcript_starts_with_what_the_child_was_started_with() {
        let link = ChildLink {
            parent_id: "p".into(),
            call_id: None,
            name: "explorer".into(),
            depth: 1,
            system_prompt: Some("You explore.\nQuietly.\n".into()),
            tools: vec!["echo".into(), "read".into()],
            model: Some("small".into()),
            max_turns: None,
        };
        let record = record(1, "explorer", AgentState::Done, None);
        let shown = transcript("aaaa1111-x", &record, Some(&link), &[Message::user("go")]);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[1], "tools: echo, read · model small");
        assert_eq!(lines[2..4], ["system prompt: You explore.", "Quietly."]);
        assert_eq!(lines[4], "› go");
    }
}
