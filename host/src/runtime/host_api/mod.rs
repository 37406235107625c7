//! The host side of the plugin's imports, one file per WIT interface, independent of the
//! contract version: each contract line's bindings (`crate::plugins::contract`) convert its
//! types and call these.

mod agents;
mod edits;
mod events;
mod history;
mod hook_filter;
mod log;
mod meter;
mod model;
mod process;
mod reuse;
mod state;
mod tools;

pub use agents::{AgentContext, AgentService, AgentSpec, AgentState, AgentStatus, AgentsGrant};
pub use edits::{EDIT_BYTES_PER_CALL, ReportedEdits};
pub use history::ResultPositions;
pub use log::Level;
pub use meter::MeterReading;
pub use model::{ChatMessage, ChatRole, Completion, ModelAsk, ModelBudget, ModelGrant, ModelService};
pub use process::{ProcessOutput, ProcessRequest};
