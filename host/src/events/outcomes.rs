//! How a turn ended and how a tool call was decided: the agent's own types, defined here
//! because they are what the event stream reports (the agent re-exports them).

use schemars::JsonSchema;
use serde::Serialize;

/// How a turn ended. `run_turn` returns `Done`, `ReplyCut`, `MaxIterations` or `Blocked`; `Error` and
/// `Cancelled` are the ends the front end reports when the turn failed or was cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model stopped and no `stop` hook continued (or an approval nobody could give
    /// ended the turn).
    Done,
    /// As `done`, but the model's last reply was cut at the output limit
    /// (`[model] max_output_tokens`): its text is incomplete.
    ReplyCut,
    /// The turn used `agent.max_iterations` model calls.
    MaxIterations,
    /// A `user-prompt-submit` hook refused the prompt (the `prompt_blocked` event says who
    /// and why), or a judge found the work blocked (`turn_stopped` says who and why).
    Blocked,
    /// A judge found that the work needs the operator's input (`turn_stopped` says who and
    /// what).
    NeedInput,
    /// The turn failed: the model, the session store, or the plugin set (an `error` event
    /// comes first).
    Error,
    /// The operator cancelled the turn (Ctrl-C).
    Cancelled,
    /// The turn spent `agent.max_turn_tokens`, its plugins' model calls included.
    TokenBudget,
    /// The turn ran `agent.max_turn_secs`.
    TimeBudget,
}

/// The operator's answer to an approval request. On the stream it is the `answer` field
/// (and, for `deny`, an optional `reason`) of `approval_answered`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// Run this call.
    AllowOnce,
    /// Run this call and every later call of this tool in this session that is asked about
    /// by the same hook for the same reason (see `agent::StandingApprovals`).
    AllowToolAlways,
    /// Run this call and every later call of this tool with exactly these arguments, asked
    /// about by the same hook for the same reason.
    AllowExactAlways,
    /// Refuse; the reason (if any) goes to the model.
    Deny {
        // Left out, never `null`, when there is none.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "String")]
        reason: Option<String>,
    },
    /// Nobody can answer (no terminal, `--json`): the configured `agent.on_ask` decides.
    Unanswerable,
}

/// What was decided about a tool call that a hook refused or asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallDecision {
    /// Refused, by a hook's `deny`, the operator, or `agent.on_ask = "deny"`.
    Deny,
    /// The operator allowed this call.
    AllowOnce,
    /// The operator allowed this call and later ones of this tool asked for the same reason.
    AllowToolAlways,
    /// The operator allowed this call and later ones with exactly these arguments.
    AllowExactAlways,
    /// Nobody could answer and `agent.on_ask = "allow"` let the call run.
    AllowByDefault,
    /// A plugin's `review` (contract 0.2.7) allowed a call a hook asked about.
    AllowByReview,
}

/// What a plugin's `review` said of a call (the `tool_reviewed` event's `verdict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReviewOutcome {
    /// Not its call: the next plugin that reviews, or the operator, decides.
    Abstain,
    Allow,
    Deny,
    /// The review failed: the operator is asked (or `agent.on_ask` decides), as without it.
    Error,
}
