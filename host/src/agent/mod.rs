//! The agent loop and the [`Host`] that owns everything it needs.
//!
//! Three rooms under the [`Host`] (`host.rs`, the one `impl Host`): `session` (an open
//! session, its views and the operator's commands), `turn` (one user turn: prompt hooks, then
//! model round trips — each assembled from the plugins ([`prepare`]) — until the model stops
//! and no `stop` hook continues, or a cap is reached) and `tool_call` (each call validated and
//! passed through the hooks and the operator's approval). A step ends in one place
//! (`LiveSession::end_step`): plugins' model calls reported, views gathered, the session
//! committed.

mod children;
mod host;
mod plugin_model;
mod report;
mod session;
mod snapshot;
mod tool_call;
mod turn;
mod window_check;

pub use crate::plugins::PluginSet;
pub use children::{ChildLink, ChildRecord, recorded_children, recorded_parent};
pub use host::Host;
pub use session::command::{BUILT_IN_COMMANDS, is_command, split_command};
pub use session::views::Views;
pub use session::{LiveSession, LiveSessions, SessionHandle};
pub use snapshot::Snapshot;
pub use tool_call::approval::{
    AgentLabel, ApprovalAnswer, ApprovalRequest, Approver, Ask, NoOperator, StandingApproval,
    StandingApprovals,
};
pub use tool_call::verdict::Verdict;
pub use turn::judges::InputWaiting;
pub use turn::prepare;

pub use crate::events::TurnEnd;
use crate::model::ModelError;
use crate::state::StoreError;

/// A finished turn.
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    /// `Done`, `ReplyCut`, `MaxIterations` or `Blocked`.
    pub end: TurnEnd,
    /// Model calls made in this turn.
    pub iterations: u32,
    /// The model's last reply text.
    pub reply: String,
    /// Tokens the turn spent, as its `turn_ended` event counts them.
    pub tokens: u64,
}

/// Why a turn could not finish. Everything committed before the failure stays.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the tool `{tool}` is offered by both {first} and {second}; remove one of the plugins")]
    DuplicateTool { tool: String, first: String, second: String },
}
