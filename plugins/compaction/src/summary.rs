//! What the model is asked for a summary: the instructions, and the conversation to
//! summarise as a transcript cut to fit the context window beside the summary itself.

use agent_host_sdk::compaction::{HistoryMessage, MessageRole};

use crate::groups::called;
use crate::pipeline::estimate;

/// What a summary starts with, so the model reading it knows what it is.
pub const SUMMARY_HEADING: &str = "Summary of the conversation so far:";

/// The instructions for the summary.
pub const INSTRUCTIONS: &str = "\
You summarise the conversation so far between a user and an AI agent that works with tools, so \
that the agent can carry on from your summary alone: the older messages will no longer be \
shown to it.

Write a faithful, concise summary. Include:
- the user's goals and requests, in their own terms, and any constraints they set;
- the decisions made, and why;
- the files, commands and other resources involved, and what was learnt or changed in each;
- where the work stands: what is done, what failed, what is in progress;
- the open questions and the next steps.

Keep names, paths, identifiers, numbers and error messages exactly as they appear. Do not \
invent anything, and say so when something is uncertain. The agent's todo list and its \
current mode are kept elsewhere and shown to it on every call, so you need not repeat them. \
Answer with the summary only.";

/// What the summariser is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest {
    /// The instructions, for the system prompt.
    pub system: String,
    /// The conversation to summarise, as the user message.
    pub transcript: String,
    /// The most tokens the summary may take.
    pub max_output_tokens: u32,
}

/// One message of the transcript: whose, and what it says.
pub struct Line {
    pub heading: String,
    pub body: String,
}

impl Line {
    /// A message of the history as the transcript shows it; `tool_names` names the tool a
    /// call id called.
    pub fn of(message: &HistoryMessage, tool_names: &dyn Fn(&str) -> Option<String>) -> Self {
        let heading = match message.role {
            MessageRole::System => "System".to_owned(),
            MessageRole::User => "User".to_owned(),
            MessageRole::Assistant => "Assistant".to_owned(),
            MessageRole::Tool => match message.tool_call_id.as_deref().and_then(tool_names) {
                Some(name) => format!("Result of `{name}`"),
                None => "Tool result".to_owned(),
            },
        };
        let mut body = message.content.trim().to_owned();
        for call in &message.tool_calls {
            if !body.is_empty() {
                body.push('\n');
            }
            body.push_str(&format!("[{}]", called(call)));
        }
        Self { heading, body }
    }

    /// The stand-in an evicted group left, spoken by the assistant.
    pub fn stand_in(text: String) -> Self {
        Self { heading: "Assistant".to_owned(), body: text }
    }
}

/// The request for a summary of `lines` within a context window of `context_window` tokens:
/// the transcript is cut, longest messages first, so that it fits beside the instructions and
/// the summary.
pub fn request(lines: &[Line], context_window: u32, max_output_tokens: u32) -> SummaryRequest {
    let room = context_window.saturating_sub(max_output_tokens).saturating_sub(estimate(INSTRUCTIONS));
    // The estimate is rough, so a tenth is left over; and every message's heading has room.
    let budget = (room as usize * 36 / 10).saturating_sub(lines.len() * 64);
    let cap = fitting_cap(&lines.iter().map(|line| line.body.len()).collect::<Vec<_>>(), budget);
    let transcript = lines
        .iter()
        .map(|line| format!("## {}\n{}", line.heading, clipped(&line.body, cap)))
        .collect::<Vec<_>>()
        .join("\n\n");
    SummaryRequest { system: INSTRUCTIONS.to_owned(), transcript, max_output_tokens }
}

/// The largest length every body may keep so that they add up to at most `budget` bytes
/// (longer ones are cut to it); none when all fit as they are.
fn fitting_cap(lengths: &[usize], budget: usize) -> Option<usize> {
    let total = |cap: usize| lengths.iter().map(|&length| length.min(cap)).sum::<usize>();
    let longest = lengths.iter().copied().max().unwrap_or(0);
    if total(longest) <= budget {
        return None;
    }
    let (mut fits, mut over) = (0, longest);
    while over - fits > 1 {
        let middle = fits + (over - fits) / 2;
        if total(middle) <= budget { fits = middle } else { over = middle }
    }
    Some(fits)
}

/// `text` cut to about `cap` bytes when longer: its head and tail, and what was left out.
fn clipped(text: &str, cap: Option<usize>) -> String {
    let Some(cap) = cap.filter(|&cap| text.len() > cap) else { return text.to_owned() };
    let head = floor_boundary(text, cap * 2 / 3);
    let tail = ceil_boundary(text, text.len() - (cap - cap * 2 / 3));
    format!("{}\n[… {} bytes left out …]\n{}", &text[..head], tail - head, &text[tail..])
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The summary message's text.
pub fn summary_text(summary: &str) -> String {
    format!("{SUMMARY_HEADING}\n\n{}", summary.trim())
}
