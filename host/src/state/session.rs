use super::StateBag;
use super::lease::LeaseGuard;
use super::store::{SessionStore, Step, StoreError};
use crate::model::Message;
use crate::plugins::ProvideMemo;

/// One conversation: its history, its plugins' state bag, its counters.
///
/// Changes accumulate in memory and become durable with [`Session::commit`], which the
/// agent loop calls after every step.
pub struct Session {
    id: String,
    history: Vec<Message>,
    bag: StateBag,
    model_calls: u64,
    /// How much of `history` the store already has.
    persisted: usize,
    /// The model-call count the store already has.
    persisted_model_calls: u64,
    resumed: bool,
    /// Contributions plugins declared reusable; a cache, so not persisted.
    provide_memo: ProvideMemo,
    /// This process's lease on the session; released when the session is dropped.
    lease: LeaseGuard,
}

impl Session {
    pub(super) fn new(id: String, lease: LeaseGuard) -> Self {
        Self {
            id,
            history: Vec::new(),
            bag: StateBag::default(),
            model_calls: 0,
            persisted: 0,
            persisted_model_calls: 0,
            resumed: false,
            provide_memo: ProvideMemo::default(),
            lease,
        }
    }

    pub(super) fn resumed(id: String, stored: super::StoredSession, lease: LeaseGuard) -> Self {
        let persisted = stored.history.len();
        Self {
            id,
            history: stored.history,
            bag: StateBag::from_entries(stored.state),
            model_calls: stored.model_calls,
            persisted,
            persisted_model_calls: stored.model_calls,
            resumed: true,
            provide_memo: ProvideMemo::default(),
            lease,
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    pub fn bag(&self) -> &StateBag {
        &self.bag
    }

    pub fn provide_memo(&self) -> &ProvideMemo {
        &self.provide_memo
    }

    pub fn model_calls(&self) -> u64 {
        self.model_calls
    }

    /// Whether this session existed before this process opened it.
    pub fn was_resumed(&self) -> bool {
        self.resumed
    }

    /// Whether nothing has happened in this session yet.
    pub fn is_empty(&self) -> bool {
        self.history.is_empty()
    }

    pub fn push(&mut self, message: Message) {
        self.history.push(message);
    }

    pub fn count_model_call(&mut self) {
        self.model_calls += 1;
    }

    /// Makes everything since the last commit durable, in one transaction; nothing at all
    /// when nothing changed. On failure the changes stay pending and the next commit
    /// retries them.
    pub fn commit(&mut self, store: &dyn SessionStore) -> Result<(), StoreError> {
        let changes = self.bag.take_changes();
        if changes.is_empty()
            && self.persisted == self.history.len()
            && self.persisted_model_calls == self.model_calls
        {
            return Ok(());
        }
        let step = Step {
            lease: Some(self.lease.token()),
            first_seq: self.persisted,
            messages: &self.history[self.persisted..],
            changes: &changes,
            model_calls: self.model_calls,
        };
        match store.commit(&self.id, step) {
            Ok(()) => {
                self.persisted = self.history.len();
                self.persisted_model_calls = self.model_calls;
                Ok(())
            }
            Err(error) => {
                self.bag.restore_changes(&changes);
                Err(error)
            }
        }
    }
}
