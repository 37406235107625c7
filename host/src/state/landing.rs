//! A commit that lands whether or not its caller keeps waiting for it.
//!
//! A turn can be dropped at any await: Ctrl-C drops it, a cancel over HTTP aborts its task. A
//! step committed synchronously could not be cut in two that way; one awaited can — the store
//! has the step (or refused it) while the session, never told, would send it again at its next
//! commit and hear that its positions are taken. So a [`Landing`] dropped before its commit
//! answered waits for the answer where it is dropped ([`super::wait`]: the commit makes its
//! progress on the store's thread), and settles the session's books with it either way.
//! Dropping a turn costs what a synchronous commit cost it: at most the rest of one commit.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::store::{StoreError, StoreFuture};

/// What a session does with its commit's answer.
pub(super) trait Settle {
    fn settle(&mut self, outcome: &Result<(), StoreError>);
}

/// A commit being awaited, and the books it settles.
pub(super) struct Landing<'a, S: Settle> {
    /// `None` once answered.
    commit: Option<StoreFuture<'a, ()>>,
    books: S,
}

impl<'a, S: Settle> Landing<'a, S> {
    pub(super) fn new(commit: StoreFuture<'a, ()>, books: S) -> Self {
        Self { commit: Some(commit), books }
    }
}

impl<S: Settle + Unpin> Future for Landing<'_, S> {
    type Output = Result<(), StoreError>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(commit) = self.commit.as_mut() else {
            return Poll::Ready(Err(StoreError::Unavailable(
                "a commit was awaited after it answered".into(),
            )));
        };
        let outcome = std::task::ready!(commit.as_mut().poll(context));
        self.commit = None;
        self.books.settle(&outcome);
        Poll::Ready(outcome)
    }
}

impl<S: Settle> Drop for Landing<'_, S> {
    fn drop(&mut self) {
        let Some(commit) = self.commit.take() else { return };
        let outcome = super::wait::wait(commit);
        self.books.settle(&outcome);
        if let Err(error) = outcome {
            tracing::warn!("a step committed after its turn was dropped was refused: {error}");
        }
    }
}
