//! What a compaction is asked with and what it reports: why it runs, the numbers it works
//! to, and what it did. The same for a plugin's compaction and the host's truncation.

use super::view::MessageId;

/// Why a compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The next request's estimate passed the trigger.
    Threshold,
    /// The operator asked (`/compact`).
    Requested,
    /// The endpoint refused the last request as longer than its context.
    ContextTooLong,
}

impl Reason {
    /// The name the event stream and the console use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Threshold => "threshold",
            Self::Requested => "requested",
            Self::ContextTooLong => "context_too_long",
        }
    }
}

/// The numbers a compaction works to, in estimated tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionBudget {
    pub reason: Reason,
    pub context_window: u32,
    pub max_output_tokens: u32,
    /// What every request carries besides the history (system prompt, tools, injected
    /// messages).
    pub fixed_tokens: u32,
    /// The history's tokens now, every message sent.
    pub history_tokens: u32,
    /// The most the history may take after the compaction; a result over it is not used.
    pub limit: u32,
    /// What the host's own truncation brings the history down to.
    pub target: u32,
    /// Messages that must survive (the `pre-compact` hooks' asks).
    pub keep: Vec<MessageId>,
}

/// What a committed compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub reason: Reason,
    /// The compacting plugin's name, or `truncate` for the host's own truncation.
    pub strategy: String,
    /// The compactor's note, or why the host truncated instead.
    pub note: String,
    pub tokens_before: u32,
    pub tokens_after: u32,
    /// Messages sent before that were replaced, and new messages that replaced them.
    pub replaced: u32,
    pub summaries: u32,
}

/// The strategy name of the host's own truncation.
pub const TRUNCATE: &str = "truncate";
