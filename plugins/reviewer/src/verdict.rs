//! The reviewer model's answer read: one JSON object with `decision` and `reason`. Anything
//! else is an error, so that a confused model never decides a call.

use agent_host_sdk::judge::ReviewVerdict;
use serde::Deserialize;

#[derive(Deserialize)]
struct Answer {
    decision: String,
    #[serde(default)]
    reason: Option<String>,
}

/// The most of an answer that made no sense an error quotes.
const QUOTED: usize = 200;

pub fn read(answer: &str) -> ReviewVerdict {
    let parsed = match (answer.find('{'), answer.rfind('}')) {
        (Some(start), Some(end)) if start < end => serde_json::from_str::<Answer>(&answer[start..=end]).ok(),
        _ => None,
    };
    let Some(parsed) = parsed else { return nonsense(answer) };
    let reason = parsed.reason.map(|reason| reason.trim().to_owned()).filter(|reason| !reason.is_empty());
    match parsed.decision.trim().to_ascii_lowercase().as_str() {
        "allow" => ReviewVerdict::Allow,
        "deny" => ReviewVerdict::Deny(reason.unwrap_or_else(|| "the reviewer denied it".to_owned())),
        _ => nonsense(answer),
    }
}

fn nonsense(answer: &str) -> ReviewVerdict {
    let quoted: String = answer.chars().take(QUOTED).collect();
    ReviewVerdict::Error(format!("the reviewer's answer made no sense: {quoted:?}"))
}
