use super::StateBag;
use super::lease::LeaseGuard;
use super::store::{SessionStore, Step, StoreError};
use crate::conversation::{History, Message};
use crate::events::TokenUsage;

/// One conversation as stored: its history, its plugins' state bag, its counters. What is
/// only cached for it in memory is kept beside it by the layer that uses it.
///
/// Changes accumulate in memory and become durable with [`Session::commit`], which the
/// agent loop calls after every step.
pub struct Session {
    id: String,
    history: History,
    bag: StateBag,
    model_calls: u64,
    /// The tokens of every reported model call, stored and pending.
    usage: TokenUsage,
    /// The last reported call: its reply's history position and what it used.
    last_usage: Option<(usize, TokenUsage)>,
    /// What the replies not yet committed used, by history position.
    pending_usage: Vec<(usize, TokenUsage)>,
    /// How much of `history` the store already has.
    persisted: usize,
    /// The model-call count the store already has.
    persisted_model_calls: u64,
    resumed: bool,
    /// This process's lease on the session; released when the session is dropped.
    lease: LeaseGuard,
}

impl Session {
    pub(super) fn new(id: String, lease: LeaseGuard) -> Self {
        Self {
            id,
            history: History::default(),
            bag: StateBag::default(),
            model_calls: 0,
            usage: TokenUsage::default(),
            last_usage: None,
            pending_usage: Vec::new(),
            persisted: 0,
            persisted_model_calls: 0,
            resumed: false,
            lease,
        }
    }

    pub(super) fn resumed(id: String, stored: super::StoredSession, lease: LeaseGuard) -> Self {
        let persisted = stored.history.len();
        Self {
            id,
            history: History::from(stored.history),
            bag: StateBag::from_entries(stored.state),
            model_calls: stored.model_calls,
            usage: stored.usage,
            last_usage: stored.last_usage,
            pending_usage: Vec::new(),
            persisted,
            persisted_model_calls: stored.model_calls,
            resumed: true,
            lease,
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn bag(&self) -> &StateBag {
        &self.bag
    }

    pub fn model_calls(&self) -> u64 {
        self.model_calls
    }

    /// The tokens this session's model calls used, as far as their endpoints reported.
    pub fn usage(&self) -> TokenUsage {
        self.usage
    }

    /// The last model call whose endpoint reported its usage: the history position of its
    /// reply (so the request was the history before it) and what it used.
    pub fn last_usage(&self) -> Option<(usize, TokenUsage)> {
        self.last_usage
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

    /// Appends a model reply with what its call used (stored beside it, never in it).
    pub fn push_reply(&mut self, message: Message, usage: Option<TokenUsage>) {
        if let Some(usage) = usage {
            self.pending_usage.push((self.history.len(), usage));
            self.usage = self.usage.plus(usage);
            self.last_usage = Some((self.history.len(), usage));
        }
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
            usage: &self.pending_usage,
            changes: &changes,
            model_calls: self.model_calls,
        };
        match store.commit(&self.id, step) {
            Ok(()) => {
                self.persisted = self.history.len();
                self.persisted_model_calls = self.model_calls;
                self.pending_usage.clear();
                Ok(())
            }
            Err(error) => {
                self.bag.restore_changes(&changes);
                Err(error)
            }
        }
    }
}
