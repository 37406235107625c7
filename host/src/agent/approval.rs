//! Asking the operator about a tool call that a hook answered with `ask`.

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the operator is asked about.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub tool: String,
    pub plugin: String,
    pub arguments: Value,
    /// Why a hook asked, and which hook.
    pub reason: String,
    pub asked_by: String,
}

/// The operator's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Run this call.
    AllowOnce,
    /// Run this call and every later call of this tool in this session.
    AllowToolAlways,
    /// Run this call and every later call of this tool with exactly these arguments.
    AllowExactAlways,
    /// Refuse; the reason (if any) goes to the model.
    Deny(Option<String>),
    /// Nobody can answer (no terminal, `--json`): the configured `on_ask` decides.
    Unanswerable,
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

/// "Always" answers, kept in the session's state bag under the host's own namespace so
/// they hold for the rest of the session, across restarts.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct StandingApprovals {
    pub tools: Vec<String>,
    pub exact: Vec<(String, Value)>,
}

/// The state namespace the host itself uses; plugin names cannot collide with it because
/// they may not contain a dot.
pub const HOST_NAMESPACE: &str = "agent-host.approvals";
const KEY: &str = "standing";

impl StandingApprovals {
    pub fn load(bag: &crate::state::StateBag) -> Self {
        bag.get(HOST_NAMESPACE, KEY).and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
    }

    pub fn covers(&self, tool: &str, arguments: &Value) -> bool {
        self.tools.iter().any(|t| t == tool)
            || self.exact.iter().any(|(t, args)| t == tool && args == arguments)
    }

    pub fn record(bag: &crate::state::StateBag, answer: &ApprovalAnswer, tool: &str, arguments: &Value) {
        let mut standing = Self::load(bag);
        match answer {
            ApprovalAnswer::AllowToolAlways => standing.tools.push(tool.to_owned()),
            ApprovalAnswer::AllowExactAlways => standing.exact.push((tool.to_owned(), arguments.clone())),
            _ => return,
        }
        let text = serde_json::to_string(&standing).expect("approvals serialize");
        bag.put(HOST_NAMESPACE, KEY, Some(text));
    }
}
