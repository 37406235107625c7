//! The agent loop and the [`Host`] that owns everything it needs.
//!
//! One user turn (see `turn`): prompt hooks, then model round trips — each assembled from
//! the plugins ([`prepare`]), each tool call validated and passed through the hooks
//! (`tool_call`) — until the model stops and no `stop` hook continues, or the iteration
//! cap is reached. The session is committed after every step.

mod approval;
mod command;
mod compact;
mod export_file;
mod hooks;
mod host;
mod live_session;
mod mcp_table;
mod meter;
mod plugin_model;
pub mod prepare;
mod reply;
mod report;
mod review;
mod snapshot;
mod tool_call;
mod turn;
mod turn_end;
mod turn_judges;
mod views;
mod window_check;

pub use crate::plugins::PluginSet;
pub use approval::{
    ApprovalAnswer, ApprovalRequest, Approver, Ask, NoOperator, StandingApproval, StandingApprovals,
};
pub use command::{BUILT_IN_COMMANDS, is_command, split_command};
pub use hooks::Verdict;
pub use host::Host;
pub use live_session::{LiveSession, LiveSessions, SessionHandle};
pub use snapshot::Snapshot;
pub use turn_judges::InputWaiting;
pub use views::Views;

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
