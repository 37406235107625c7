//! The children running on this host, each with what stops it alone. An operator's cancel of
//! one child (ACP's `session/cancel` of its session, `serve`'s cancel of it) ends that child's
//! turn; its parent's turn goes on, the child's call answered that it was cancelled. A cancel
//! of the parent's turn still stops every child it runs, by dropping them with it.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use crate::unpoisoned::LockUnpoisoned as _;

#[derive(Default)]
pub struct RunningChildren {
    by_session: Mutex<HashMap<String, CancellationToken>>,
}

impl RunningChildren {
    /// Child `id`'s turn begins: cancellable by its id until the guard is dropped. Taken with
    /// the child's session locked.
    pub(super) fn begin(&self, id: &str) -> Running<'_> {
        let token = CancellationToken::new();
        self.by_session.lock_unpoisoned().insert(id.to_owned(), token.clone());
        Running { registry: self, id: id.to_owned(), token }
    }

    /// Cancels child `id`'s turn if it runs on this host; `false` when none does.
    pub fn cancel(&self, id: &str) -> bool {
        match self.by_session.lock_unpoisoned().get(id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

/// A running child's registration, taken back when its turn is over.
pub(super) struct Running<'a> {
    registry: &'a RunningChildren,
    id: String,
    token: CancellationToken,
}

impl Running<'_> {
    /// Completes when an operator cancels this child.
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        // One registration per child at a time: it is taken while the child's session is
        // locked, so a second run of the same child begins after this one ends.
        self.registry.by_session.lock_unpoisoned().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_cancel_reaches_the_running_child_named_and_only_while_it_runs() {
        let registry = RunningChildren::default();
        assert!(!registry.cancel("a"), "nothing runs yet");
        let (a, b) = (registry.begin("a"), registry.begin("b"));
        assert!(registry.cancel("a"));
        tokio::time::timeout(std::time::Duration::from_secs(5), a.cancelled()).await.expect("a is cancelled");
        assert!(!b.token.is_cancelled(), "b runs on");
        drop(a);
        assert!(!registry.cancel("a"), "a's turn is over");
        assert!(registry.cancel("b"));
    }
}
