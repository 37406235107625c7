//! `history.result-of` (contract 0.2.7): where a tool call's result stands in the session's
//! stored history, answered in the `pre-compact` hooks, which name messages to keep by
//! position; every other call gets none.

use std::collections::HashMap;
use std::sync::Arc;

/// The position of each tool result in the stored history, by the id of the call it answers.
#[derive(Debug, Clone, Default)]
pub struct ResultPositions(Arc<HashMap<String, u64>>);

impl ResultPositions {
    /// From the results of a history: each with its call's id and its position.
    pub fn new(results: impl IntoIterator<Item = (String, u64)>) -> Self {
        Self(Arc::new(results.into_iter().collect()))
    }

    pub fn of(&self, call_id: &str) -> Option<u64> {
        self.0.get(call_id).copied()
    }
}
