//! The judge: what it is asked about the agent's last reply, and what its answer means. Its
//! answer is one JSON object; one that is not is read as "not yet, no progress", so a judge
//! that talks nonsense blocks the goal after the stalls allowed instead of looping on.

use agent_host_sdk::model::ChatMessage;
use serde::Deserialize;

use crate::goal::Goal;

/// What the judge decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    Done,
    /// Not yet; whether the last step moved toward the goal, and what is next.
    NotYet {
        progress: bool,
        next: Option<String>,
    },
    Blocked {
        why: String,
    },
}

const INSTRUCTIONS: &str = "You judge whether an agent has reached its operator's goal. Read the \
objective and the agent's last reply. Answer with one JSON object and nothing else: \
{\"verdict\": \"done\" | \"continue\" | \"blocked\", \"progress\": true | false, \"next\": \"what is \
left, in one sentence\"}. `done` only when the reply shows the objective met. `blocked` when the agent \
cannot go on without something it cannot get. `progress` says whether the last reply moved toward the \
objective.";

/// The messages the judge is sent; the reply is cut to `max_reply_chars`.
pub fn messages(goal: &Goal, reply: &str, max_reply_chars: usize) -> Vec<ChatMessage> {
    let reply: String = reply.chars().take(max_reply_chars).collect();
    let note = goal.note.as_deref().map(|note| format!("\n\nYour last note: {note}")).unwrap_or_default();
    vec![
        ChatMessage::system(INSTRUCTIONS),
        ChatMessage::user(format!("Objective: {}{note}\n\nThe agent's last reply:\n{reply}", goal.objective)),
    ]
}

#[derive(Deserialize)]
struct Answer {
    verdict: String,
    #[serde(default)]
    progress: bool,
    #[serde(default)]
    next: Option<String>,
}

/// The judge's answer read: the first `{` to the last `}` as JSON.
pub fn read(answer: &str) -> Judgement {
    let object = match (answer.find('{'), answer.rfind('}')) {
        (Some(start), Some(end)) if start < end => &answer[start..=end],
        _ => return Judgement::NotYet { progress: false, next: None },
    };
    let Ok(answer) = serde_json::from_str::<Answer>(object) else {
        return Judgement::NotYet { progress: false, next: None };
    };
    let next = answer.next.filter(|next| !next.trim().is_empty());
    match answer.verdict.trim().to_ascii_lowercase().as_str() {
        "done" => Judgement::Done,
        "blocked" => {
            Judgement::Blocked { why: next.unwrap_or_else(|| "the judge found the work blocked".to_owned()) }
        }
        _ => Judgement::NotYet { progress: answer.progress, next },
    }
}
