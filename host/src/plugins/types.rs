//! The plugin contract as the host sees it: plain Rust types, the same whichever contract
//! version a plugin was built against. `contract::v0_*` convert each version's bindings to
//! and from these; nothing past `plugins::contract` sees a generated type.

use std::ops::BitOr;

pub use crate::runtime::EmittedEvent as PluginEvent;
/// A tool a plugin offers to the model (declared from `configure`, or returned by `provide`).
pub use crate::runtime::ToolSpec;
use crate::tools::{ToolCall, ToolResult};

/// Which exports a plugin really implements; the host never calls the others.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exports(u16);

impl Exports {
    pub const PROVIDE: Self = Self(1 << 0);
    pub const CALL_TOOL: Self = Self(1 << 1);
    pub const SESSION_START: Self = Self(1 << 2);
    pub const USER_PROMPT_SUBMIT: Self = Self(1 << 3);
    pub const PRE_TOOL_USE: Self = Self(1 << 4);
    pub const POST_TOOL_USE: Self = Self(1 << 5);
    pub const STOP: Self = Self(1 << 6);
    pub const COMMAND: Self = Self(1 << 7);
    /// Since contract 0.2.0.
    pub const STATUS: Self = Self(1 << 8);
    /// Since contract 0.2.3, through the `compactor` export's `spec`: `compact` replaces a
    /// prefix of the history.
    pub const COMPACT: Self = Self(1 << 9);
    /// Since 0.2.3: `pre-compact` may veto a compaction or name messages to keep.
    pub const PRE_COMPACT: Self = Self(1 << 10);
    /// Since 0.2.3: `post-compact` hears what a compaction did.
    pub const POST_COMPACT: Self = Self(1 << 11);
    /// Since contract 0.2.4, through the `viewer` export's `shows`: `view` describes what
    /// front ends show of the plugin.
    pub const VIEW: Self = Self(1 << 12);
    /// Since contract 0.2.7, through the `judge` export's `spec`: `turn-end` judges how a
    /// turn ends.
    pub const TURN_END: Self = Self(1 << 13);
    /// Since 0.2.7: `review` judges a call the permission hooks would ask about.
    pub const REVIEW: Self = Self(1 << 14);
    /// Since 0.2.7: `queued` gives a turn to run after an operator command.
    pub const QUEUED: Self = Self(1 << 15);

    pub const fn empty() -> Self {
        Self(0)
    }

    /// Whether every capability of `other` is in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for Exports {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// What the host tells a plugin about the call it makes (the plugin's configuration is
/// added by the call itself).
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    pub session_id: String,
    pub model_calls: u64,
    pub turn_iteration: u32,
    /// The model a plugin granted `model = true` may ask from this call; `None` where no
    /// session's model is at hand (loading, `status`).
    pub model: Option<ModelAccess>,
    /// What the running turn has spent, as the `meter` import reads it (contract 0.2.6);
    /// zero outside a turn.
    pub meter: crate::runtime::host_api::MeterReading,
    /// Where the session's tool results stand, for the `history` import (contract 0.2.7):
    /// given to the `pre-compact` hooks only.
    pub results: Option<crate::runtime::host_api::ResultPositions>,
    /// The children a plugin granted `agents = true` may start from this call (contract
    /// 0.2.8); `None` where the call may start none.
    pub agents: Option<AgentsAccess>,
}

/// The children calls of a session may start, as the layer that runs them set it up.
#[derive(Clone)]
pub struct AgentsAccess(pub std::sync::Arc<dyn crate::runtime::host_api::AgentService>);

impl std::fmt::Debug for AgentsAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentsAccess")
    }
}

/// The model calls of a session may ask, as the layer that owns the model client set it up.
#[derive(Clone)]
pub struct ModelAccess(pub std::sync::Arc<dyn crate::runtime::host_api::ModelService>);

impl std::fmt::Debug for ModelAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ModelAccess")
    }
}

/// An operator command a plugin answers, such as `/notes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    pub name: String,
    pub description: String,
    pub usage: String,
}

/// Who a plugin is and what it implements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub capabilities: Exports,
    pub commands: Vec<CommandSpec>,
}

/// Something a plugin needs from the host under its configuration, checked against its
/// grants at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// Reads this other plugin's state: needs `read_state = ["NAME"]` and a plugin so named.
    ReadsState(String),
    /// Runs processes: needs `process = true`.
    RunsProcesses,
    /// Its processes need the network: needs `network = true`.
    Network,
}

/// What `configure` returned: the configuration every later call gets, and what it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configured {
    pub config: String,
    pub requires: Vec<Requirement>,
}

/// Who an injected message speaks as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectedRole {
    System,
    User,
}

/// A message a plugin adds to the model's context for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedMessage {
    pub role: InjectedRole,
    pub content: String,
}

/// What `provide` contributes to one model call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contribution {
    pub instructions: Option<String>,
    pub tools: Vec<ToolSpec>,
    pub messages: Vec<InjectedMessage>,
}

/// A tool call as the hooks see it: with the plugin that owns the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUse {
    pub call: ToolCall,
    pub plugin: String,
    pub mutates: bool,
}

/// A hook's decision on a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Ask(String),
    Deny(String),
}

/// What `pre-tool-use` returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreToolOutcome {
    pub decision: Option<Decision>,
    pub updated_arguments: Option<String>,
    pub context: Option<String>,
}

/// What `post-tool-use` returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostToolOutcome {
    pub replace: Option<ToolResult>,
}

/// What `user-prompt-submit` returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptOutcome {
    pub block: Option<String>,
    pub context: Option<String>,
}

/// What `stop` returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopOutcome {
    Stop,
    Continue(String),
}

/// Why a judge ends a turn (contract 0.2.7), as the turn's end reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgedStop {
    NeedInput,
    Blocked,
    TokenBudget,
    TimeBudget,
}

/// What `turn-end` returns (contract 0.2.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnVerdict {
    /// No opinion.
    End,
    Continue(String),
    Stop {
        reason: JudgedStop,
        message: String,
    },
}

/// What `review` returns (contract 0.2.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewVerdict {
    Abstain,
    Allow,
    Deny(String),
    /// The review failed: never a denial, never an approval.
    Error(String),
}

/// What a plugin's `compactor` export says it does under its configuration (contract 0.2.3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactorSpec {
    /// Some of [`Exports::COMPACT`], [`Exports::PRE_COMPACT`],
    /// [`Exports::POST_COMPACT`].
    pub hooks: Exports,
    /// The share of a request's room, in percent, past which it wants to be asked.
    pub trigger_percent: Option<u8>,
}

/// What a plugin's `compact` returned: the compaction, and its one line on what it did.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginCompaction {
    pub compaction: crate::compacted_history::Compaction,
    pub note: String,
}

/// What a `pre-compact` hook says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreCompactOutcome {
    pub veto: Option<String>,
    pub keep: Vec<crate::compacted_history::MessageId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_contain_what_was_combined_and_nothing_else() {
        let both = Exports::PROVIDE | Exports::STATUS;
        assert!(both.contains(Exports::PROVIDE));
        assert!(both.contains(Exports::STATUS));
        assert!(!both.contains(Exports::CALL_TOOL));
        assert!(!both.contains(Exports::PROVIDE | Exports::STOP));
        assert!(Exports::empty().contains(Exports::empty()));
        assert!(!Exports::empty().contains(Exports::COMMAND));
    }
}
