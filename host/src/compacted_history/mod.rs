//! The history as model calls are sent it: compaction as plain data. What a model call is
//! sent in place of a prefix of the history (a [`CompactedHistory`]), what a compaction returns to
//! replace one ([`Compaction`]), the checks such a result must pass before it is used
//! ([`check`]), and the host's own truncation, the fallback when a plugin's result fails
//! them ([`truncate`]).
//!
//! Compaction changes what is sent, never what is kept: a view names stored messages by
//! their history position and adds summaries beside them; the history itself is untouched.
//! Nothing here decides when to compact or talks to a plugin or the store.

mod checks;
mod request;
mod truncate;
mod view;

pub use checks::{CompactionError, check};
pub use request::{CompactionBudget, Done, Reason, TRUNCATE};
pub use truncate::{Truncation, truncate};
pub use view::{
    CompactedHistory, Compaction, MessageId, Replacement, Summaries, Viewed, apply, materialize, viewed,
};
