use super::StateBag;
use super::lease::LeaseGuard;
use super::store::{SessionStore, Step, StoreError, StoredView, ViewChange};
use crate::compaction::{self, Compaction, MessageId, Summaries, View, ViewError, Viewed};
use crate::conversation::{History, Message};
use crate::events::TokenUsage;

/// One conversation as stored: its history, its plugins' state bag, its counters, and what
/// a compaction put in place of part of the history. What is only cached for it in memory
/// is kept beside it by the layer that uses it.
///
/// Changes accumulate in memory and become durable with [`Session::commit`], which the
/// agent loop calls after every step; a new compaction view, with [`Session::compact`].
pub struct Session {
    id: String,
    /// Every message, as stored: a compaction never changes it.
    history: History,
    /// What is sent instead of `history` since a compaction; `None` before any.
    compacted: Option<Compacted>,
    /// Every summary a compaction wrote, sent or not.
    summaries: Summaries,
    bag: StateBag,
    model_calls: u64,
    /// The tokens of every reported model call, stored and pending.
    usage: TokenUsage,
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

/// A compaction's view and the messages it sends, kept in step with the history's appends.
struct Compacted {
    view: View,
    generation: u64,
    /// A history of its own, so its revision changes with every new view (a model client's
    /// kept encodings never outlive one) and stays while messages are appended.
    sent: History,
}

/// Why [`Session::compact`] did not commit a view.
#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    #[error("the compaction cannot be used: {0}")]
    Invalid(#[from] ViewError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Session {
    pub(super) fn new(id: String, lease: LeaseGuard) -> Self {
        Self {
            id,
            history: History::default(),
            compacted: None,
            summaries: Summaries::new(),
            bag: StateBag::default(),
            model_calls: 0,
            usage: TokenUsage::default(),
            pending_usage: Vec::new(),
            persisted: 0,
            persisted_model_calls: 0,
            resumed: false,
            lease,
        }
    }

    /// The stored session, resumed; a view it cannot send is refused as corrupt.
    pub(super) fn resumed(
        id: String,
        stored: super::StoredSession,
        lease: LeaseGuard,
    ) -> Result<Self, StoreError> {
        let compacted = match stored.view {
            Some(StoredView { generation, view }) => {
                let sent = compaction::materialize(Some(&view), &stored.history, &stored.summaries).map_err(
                    |error| StoreError::CorruptView { session: id.clone(), detail: error.to_string() },
                )?;
                Some(Compacted { view, generation, sent: History::from(sent) })
            }
            None => None,
        };
        let persisted = stored.history.len();
        Ok(Self {
            id,
            history: History::from(stored.history),
            compacted,
            summaries: stored.summaries,
            bag: StateBag::from_entries(stored.state),
            model_calls: stored.model_calls,
            usage: stored.usage,
            pending_usage: Vec::new(),
            persisted,
            persisted_model_calls: stored.model_calls,
            resumed: true,
            lease,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Every message of the session, as stored; see [`Session::to_send`] for what a model
    /// call is sent.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The messages a model call is sent: the compaction view's, or the whole history
    /// before any compaction. Its revision changes whenever the view does.
    pub fn to_send(&self) -> &History {
        self.compacted.as_ref().map_or(&self.history, |compacted| &compacted.sent)
    }

    /// [`Session::to_send`]'s messages with the ids a compaction names them by.
    pub fn viewed(&self) -> Vec<Viewed<'_>> {
        compaction::viewed(self.view(), &self.history, &self.summaries)
            .expect("a session's view was checked against its history when it was made or loaded")
    }

    /// The compaction view, if there has been a compaction.
    pub fn view(&self) -> Option<&View> {
        self.compacted.as_ref().map(|compacted| &compacted.view)
    }

    pub fn summaries(&self) -> &Summaries {
        &self.summaries
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

    /// Whether this session existed before this process opened it.
    pub fn was_resumed(&self) -> bool {
        self.resumed
    }

    /// Whether nothing has happened in this session yet.
    pub fn is_empty(&self) -> bool {
        self.history.is_empty()
    }

    pub fn push(&mut self, message: Message) {
        if let Some(compacted) = &mut self.compacted {
            compacted.sent.push(message.clone());
        }
        self.history.push(message);
    }

    /// Appends a model reply with what its call used (stored beside it, never in it).
    pub fn push_reply(&mut self, message: Message, usage: Option<TokenUsage>) {
        if let Some(usage) = usage {
            self.pending_usage.push((self.history.len(), usage));
            self.usage = self.usage.plus(usage);
        }
        self.push(message);
    }

    pub fn count_model_call(&mut self) {
        self.model_calls += 1;
    }

    /// Makes everything since the last commit durable, in one transaction; nothing at all
    /// when nothing changed. On failure the changes stay pending and the next commit
    /// retries them.
    pub fn commit(&mut self, store: &dyn SessionStore) -> Result<(), StoreError> {
        self.commit_step(store, None)
    }

    /// Replaces what is sent by `compaction` of it (see [`compaction::check`], which it must
    /// pass), and makes the new view durable together with everything else pending, in one
    /// transaction. On any failure nothing changes: the old view stays, in memory and in the
    /// store. The new summaries' ids, in order.
    pub fn compact(
        &mut self,
        store: &dyn SessionStore,
        compaction: Compaction,
    ) -> Result<Vec<MessageId>, CompactError> {
        compaction::check(&self.viewed(), &compaction)?;
        let next_summary = self.summaries.last_key_value().map_or(1, |(number, _)| number + 1);
        let (view, added) = compaction::apply(self.view(), compaction, next_summary);
        let generation = self.compacted.as_ref().map_or(0, |compacted| compacted.generation) + 1;
        let mut summaries = self.summaries.clone();
        summaries.extend(added.iter().cloned());
        let sent = compaction::materialize(Some(&view), &self.history, &summaries)?;
        let change = ViewChange { generation, view: &view, summaries: &added };
        self.commit_step(store, Some(change))?;
        self.summaries = summaries;
        self.compacted = Some(Compacted { view, generation, sent: History::from(sent) });
        Ok(added.iter().map(|(number, _)| MessageId::Summary(*number)).collect())
    }

    fn commit_step(
        &mut self,
        store: &dyn SessionStore,
        view: Option<ViewChange<'_>>,
    ) -> Result<(), StoreError> {
        let changes = self.bag.take_changes();
        if view.is_none()
            && changes.is_empty()
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
            view,
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
