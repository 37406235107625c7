//! Asking the operator about a tool call that a hook answered with `ask`.

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::events::ApprovalAnswer;

/// What the operator is asked about.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub tool: String,
    pub plugin: String,
    pub arguments: Value,
    /// The arguments exactly as the tool will receive them (JSON text as the model, or a hook
    /// that rewrote them, wrote it): what the operator must see, to the last character.
    pub arguments_text: String,
    /// Why a hook asked, and which hook.
    pub reason: String,
    pub asked_by: String,
    /// The child agent (contract 0.2.8) whose call it is; `None` for the session's own.
    pub agent: Option<AgentLabel>,
}

/// A child agent as the operator is told of it: its agent name and its session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentLabel {
    pub name: String,
    pub session_id: String,
}

/// Whoever answers approval requests: the console, a UI, nobody.
pub trait Approver: Send + Sync {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer>;
}

/// No operator: every request is unanswerable, so `agent.on_ask` decides.
pub struct NoOperator;

impl Approver for NoOperator {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async { ApprovalAnswer::Unanswerable })
    }
}

/// One `ask` verdict: why, and which hook (its label, `name@version`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ask {
    pub reason: String,
    pub by: String,
}

/// One "always" answer: the tool, the arguments when it was "always these exact arguments",
/// and the ask it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StandingApproval {
    pub tool: String,
    /// `None`: any arguments.
    pub arguments: Option<Value>,
    pub ask: Ask,
    /// When it was given, in Unix seconds.
    pub granted_at: u64,
}

/// "Always" answers, kept in the session's state bag under the host's own namespace so
/// they hold for the rest of the session, across restarts.
///
/// A standing approval answers only an ask from the same hook with the same reason as the
/// one it was given for. "Always this tool" given to a policy's generic question ("`touch`
/// changes things, and this policy asks before changes") therefore does not answer a
/// later, more specific one about the same tool (an `ask` rule matching its arguments, with a reason
/// of its own, such as "deleting needs a look (`rm -rf ~` runs `rm`)"): that one is put to
/// the operator again. When several hooks ask about one call, a standing approval must
/// answer every one of them. A new version of the asking plugin asks afresh.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct StandingApprovals {
    pub granted: Vec<StandingApproval>,
}

/// The state namespace the host itself uses; plugin names cannot collide with it because
/// they may not contain a dot.
pub const HOST_NAMESPACE: &str = "agent-host.approvals";
/// Not the key of the unscoped approvals stored before they were scoped: those are left
/// unread, so such a session is asked again rather than trusted further.
const KEY: &str = "scoped";

impl StandingApprovals {
    pub fn load(bag: &crate::state::StateBag) -> Self {
        bag.get(HOST_NAMESPACE, KEY).and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
    }

    fn save(&self, bag: &crate::state::StateBag) {
        let text = serde_json::to_string(self).expect("approvals serialize");
        bag.put(HOST_NAMESPACE, KEY, Some(text));
    }

    /// Whether standing approvals answer every one of `asks` about this call.
    pub fn cover(&self, tool: &str, arguments: &Value, asks: &[Ask]) -> bool {
        !asks.is_empty() && asks.iter().all(|ask| self.covers(tool, arguments, ask))
    }

    fn covers(&self, tool: &str, arguments: &Value, ask: &Ask) -> bool {
        self.granted.iter().any(|granted| {
            granted.tool == tool
                && granted.ask == *ask
                && granted.arguments.as_ref().is_none_or(|exact| exact == arguments)
        })
    }

    /// Records an "always" answer to `asks` (any other answer records nothing).
    pub fn record(
        bag: &crate::state::StateBag,
        answer: &ApprovalAnswer,
        tool: &str,
        arguments: &Value,
        asks: &[Ask],
    ) {
        let arguments = match answer {
            ApprovalAnswer::AllowToolAlways => None,
            ApprovalAnswer::AllowExactAlways => Some(arguments.clone()),
            _ => return,
        };
        let granted_at = unix_now();
        let mut standing = Self::load(bag);
        for ask in asks {
            standing.granted.push(StandingApproval {
                tool: tool.to_owned(),
                arguments: arguments.clone(),
                ask: ask.clone(),
                granted_at,
            });
        }
        standing.save(bag);
    }

    /// `/approvals` (list), `/approvals revoke N`, `/approvals revoke all`.
    pub fn command(bag: &crate::state::StateBag, args: &str) -> Result<String, String> {
        let mut standing = Self::load(bag);
        let words: Vec<&str> = args.split_whitespace().collect();
        match words.as_slice() {
            [] | ["list"] => Ok(standing.listing()),
            ["revoke", "all"] => {
                let count = standing.granted.len();
                standing.granted.clear();
                standing.save(bag);
                Ok(format!("revoked {count} standing approval(s); every ask is put to you again"))
            }
            ["revoke", number] => {
                let count = standing.granted.len();
                let index =
                    number.parse::<usize>().ok().filter(|n| (1..=count).contains(n)).ok_or_else(|| {
                        format!("no standing approval numbered `{number}`; /approvals lists {count}")
                    })?;
                let revoked = standing.granted.remove(index - 1);
                standing.save(bag);
                Ok(format!("revoked: {}", describe(&revoked)))
            }
            _ => Err("usage: /approvals, /approvals revoke N, /approvals revoke all".to_owned()),
        }
    }

    fn listing(&self) -> String {
        if self.granted.is_empty() {
            return "no standing approvals in this session".to_owned();
        }
        let lines: Vec<String> = self
            .granted
            .iter()
            .enumerate()
            .map(|(index, granted)| format!("{}. {}", index + 1, describe(granted)))
            .collect();
        lines.join("\n")
    }
}

fn describe(granted: &StandingApproval) -> String {
    let scope = match &granted.arguments {
        None => "any arguments".to_owned(),
        Some(exact) => format!("exactly {exact}"),
    };
    format!(
        "{} with {scope}, when {} asks because: {} (granted {})",
        granted.tool,
        granted.ask.by,
        granted.ask.reason,
        crate::human_time::ago(std::time::Duration::from_secs(unix_now().saturating_sub(granted.granted_at)))
    )
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ask(reason: &str) -> Ask {
        Ask { reason: reason.into(), by: "guard@0.1.0".into() }
    }

    #[test]
    fn an_always_answer_covers_only_the_ask_it_was_given_for() {
        let bag = crate::state::StateBag::default();
        let generic = ask("`run` changes things, and this policy asks before changes");
        StandingApprovals::record(
            &bag,
            &ApprovalAnswer::AllowToolAlways,
            "run",
            &json!({"c": "ls"}),
            std::slice::from_ref(&generic),
        );
        let standing = StandingApprovals::load(&bag);
        assert!(standing.cover("run", &json!({"c": "make"}), std::slice::from_ref(&generic)));
        assert!(!standing.cover("run", &json!({"c": "rm -rf ~"}), &[ask("deleting needs a look")]));
        assert!(!standing.cover(
            "run",
            &json!({"c": "rm"}),
            &[generic.clone(), ask("deleting needs a look")]
        ));
        assert!(!standing.cover("other", &json!({}), std::slice::from_ref(&generic)));
        let other_hook = Ask { by: "strict@1.0.0".into(), ..generic.clone() };
        assert!(!standing.cover("run", &json!({}), &[other_hook]));
        assert!(!standing.cover("run", &json!({}), &[]));
    }

    #[test]
    fn exact_answers_need_the_same_arguments_and_the_same_ask() {
        let bag = crate::state::StateBag::default();
        let reason = ask("r");
        StandingApprovals::record(
            &bag,
            &ApprovalAnswer::AllowExactAlways,
            "run",
            &json!({"c": "ls"}),
            std::slice::from_ref(&reason),
        );
        StandingApprovals::record(
            &bag,
            &ApprovalAnswer::AllowOnce,
            "run",
            &json!({}),
            std::slice::from_ref(&reason),
        );
        let standing = StandingApprovals::load(&bag);
        assert_eq!(standing.granted.len(), 1);
        assert!(standing.cover("run", &json!({"c": "ls"}), std::slice::from_ref(&reason)));
        assert!(!standing.cover("run", &json!({"c": "ls -a"}), std::slice::from_ref(&reason)));
        assert!(!standing.cover("run", &json!({"c": "ls"}), &[ask("another")]));
    }

    #[test]
    fn approvals_are_listed_numbered_and_revoked_by_number_or_all() {
        let bag = crate::state::StateBag::default();
        assert_eq!(StandingApprovals::command(&bag, "").unwrap(), "no standing approvals in this session");
        for tool in ["touch", "run", "write"] {
            StandingApprovals::record(&bag, &ApprovalAnswer::AllowToolAlways, tool, &json!({}), &[ask("r")]);
        }
        let listing = StandingApprovals::command(&bag, "list").unwrap();
        let lines: Vec<&str> = listing.lines().collect();
        assert_eq!(lines.len(), 3, "{listing}");
        assert!(lines[1].starts_with("2. run with any arguments, when guard@0.1.0 asks because: r"));
        // When, as a person reads it: no Unix timestamp.
        assert!(
            lines[1].ends_with(" (granted 0 s ago)") || lines[1].ends_with(" (granted 1 s ago)"),
            "{listing}"
        );
        assert!(!listing.contains("unix"), "{listing}");
        assert!(StandingApprovals::command(&bag, "revoke 2").unwrap().starts_with("revoked: run "));
        let tools: Vec<String> = StandingApprovals::load(&bag).granted.into_iter().map(|g| g.tool).collect();
        assert_eq!(tools, ["touch", "write"]);
        assert!(StandingApprovals::command(&bag, "revoke 3").unwrap_err().contains("`3`"));
        assert!(StandingApprovals::command(&bag, "revoke x").is_err());
        assert!(StandingApprovals::command(&bag, "forget").unwrap_err().starts_with("usage"));
        assert!(StandingApprovals::command(&bag, "revoke all").unwrap().starts_with("revoked 2 "));
        assert!(StandingApprovals::load(&bag).granted.is_empty());
    }
}
