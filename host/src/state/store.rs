use std::future::Future;
use std::pin::Pin;

use super::StateChange;
use super::lease::{Fence, Holder, LeaseAnswer, Taken};
use super::listing::SessionEntry;
use crate::compacted_history::{CompactedHistory, Summaries};
use crate::conversation::Message;
use crate::events::TokenUsage;

/// A session as stored: its history, its state bag, its counters and its compaction view.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StoredSession {
    pub history: Vec<Message>,
    /// (namespace, key, JSON text), by namespace then key.
    pub state: Vec<(String, String, String)>,
    pub model_calls: u64,
    /// The tokens of every model call whose usage the endpoint reported, added up.
    pub usage: TokenUsage,
    /// What each of those calls used, by its reply's history position, in order.
    pub reply_usage: Vec<(usize, TokenUsage)>,
    /// Every summary a compaction wrote, whether the view still sends it or not.
    pub summaries: Summaries,
    /// What is sent in place of part of the history; `None` before any compaction.
    pub view: Option<StoredView>,
}

/// A session's compaction view and its generation: the first view is 1, each later one the
/// next.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredView {
    pub generation: u64,
    pub view: CompactedHistory,
}

/// A new view for a [`Step`]: it becomes the session's in the same transaction as the rest.
pub struct ViewChange<'a> {
    /// The session's view generation plus one: a generation is written once.
    pub generation: u64,
    pub view: &'a CompactedHistory,
    /// The summaries `view` adds (number, message); numbers the session has not used.
    pub summaries: &'a [(u64, Message)],
}

/// One step to make durable: messages appended since the last commit, state changes, and
/// the counters. Applied atomically: all of it or none. Positions are claimed, never
/// overwritten: a message at a position the store already holds fails the whole step with
/// [`StoreError::PositionTaken`].
pub struct Step<'a> {
    /// The lease the writer took on the session; the step fails with
    /// [`StoreError::LeaseLost`] when the session's lease is not (any more) that taking.
    pub lease: Option<Fence<'a>>,
    /// The history position of `messages[0]`.
    pub first_seq: usize,
    pub messages: &'a [Message],
    /// What the model call behind a reply in `messages` used, by the reply's history
    /// position; replies the endpoint reported nothing for are not listed.
    pub usage: &'a [(usize, TokenUsage)],
    pub changes: &'a [StateChange],
    pub model_calls: u64,
    /// A compaction's new view, when the step commits one.
    pub view: Option<ViewChange<'a>>,
}

/// What a store's asynchronous method answers with: a future that may borrow the call's
/// arguments, which a turn's task can hold across its awaits.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where sessions live. SQLite by default; the trait leaves room for a shared store.
///
/// Its methods are synchronous and may block the calling thread on the store's I/O. What a
/// turn calls on its hot path also has an asynchronous twin (`*_async`), which a store
/// whose I/O is a network round trip (PostgreSQL) answers without holding the caller's
/// thread; each twin's default runs the synchronous method, so a store need not have one.
pub trait SessionStore: Send + Sync {
    /// Records a new, empty session, leased to `holder` until `expires_at` (ms since the
    /// epoch), in one transaction. `claim` names this one taking of the lease.
    fn create(&self, id: &str, holder: &Holder, claim: &str, expires_at: i64) -> Result<Taken, StoreError>;
    /// Records a new session holding a copy of `contents` (a fork, an import), leased like
    /// [`SessionStore::create`], in one transaction: all of it or nothing. `last_used` (ms
    /// since the epoch) is when a session copied from another store was last used there;
    /// `None` for a new session (now).
    fn create_copy(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        contents: &StoredSession,
        last_used: Option<i64>,
    ) -> Result<Taken, StoreError>;
    /// Takes (or extends) the lease on `id` for `holder` until `expires_at`, as `claim`,
    /// unless another holder's lease is still live; that lease is answered then, and nothing
    /// changes. `replacing` names a holder's token whose lease may be taken even so (a holder
    /// known to have ended). Each taking is the session's next generation.
    fn lease(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        replacing: Option<&str>,
    ) -> Result<LeaseAnswer, StoreError>;
    /// Extends every lease the holder with `token` has to `expires_at`.
    fn renew_leases(&self, token: &str, expires_at: i64) -> Result<(), StoreError>;
    /// Gives up the lease on `id` if it is still the one taken as `claim` (a later claim by
    /// the same holder stays). The lease row stays, let go, so the next taking's generation
    /// follows this one's.
    fn release_lease(&self, id: &str, claim: &str) -> Result<(), StoreError>;
    /// The session, or `None` when no session has that id.
    fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError>;
    /// Makes one step durable.
    fn commit(&self, id: &str, step: Step<'_>) -> Result<(), StoreError>;
    /// [`SessionStore::commit`], awaited: the step is durable when the future answers `Ok`,
    /// and refused as `commit` refuses it otherwise.
    fn commit_async<'a>(&'a self, id: &'a str, step: Step<'a>) -> StoreFuture<'a, ()> {
        Box::pin(async move { self.commit(id, step) })
    }
    /// Session ids, most recently used first.
    fn list(&self, limit: usize) -> Result<Vec<String>, StoreError>;
    /// The sessions, most recently used first, each with what tells it apart (its last use,
    /// its first prompt as a title, its size); no history is loaded.
    fn entries(&self, limit: usize) -> Result<Vec<SessionEntry>, StoreError>;
    /// [`SessionStore::entries`] of the sessions whose owner ([`super::OWNER`]) is `owner`:
    /// filtered in the store, so another owner's sessions take no place in it.
    fn entries_owned(&self, owner: &str, limit: usize) -> Result<Vec<SessionEntry>, StoreError>;
    /// How many sessions `owner` has ([`super::OWNER`]), counted up to `up_to` at most: a
    /// cap's check needs no more, so a principal's many sessions cost it no more than her cap.
    fn count_owned(&self, owner: &str, up_to: usize) -> Result<usize, StoreError>;
    /// One state value of session `id` (JSON text), read alone: no history is loaded.
    fn state_value(&self, id: &str, namespace: &str, key: &str) -> Result<Option<String>, StoreError>;
    /// Removes the session and everything kept of it, in one transaction; `false` when no
    /// session has that id.
    fn delete(&self, id: &str) -> Result<bool, StoreError>;
    /// What hosts sharing this store tell each other through it, when many hosts can reach
    /// it; `None` for a store on one machine.
    fn shared(&self) -> Option<&dyn super::shared::SharedLog> {
        None
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("session store at {path}: {detail}")]
    Open { path: String, detail: String },
    #[error("session store: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("session store: {}", super::postgres::with_causes(.0))]
    Postgres(#[from] tokio_postgres::Error),
    #[error("session store unavailable: {0}")]
    Unavailable(String),
    #[error(
        "session store's schema is version {found}, newer than this agent-host knows ({known}): \
         a newer agent-host migrated it. Run that version (or newer) here too"
    )]
    SchemaNewer { found: usize, known: usize },
    #[error("session store's schema cannot be migrated: {0}")]
    Migration(String),
    #[error("session store holds a message that cannot be read (session {session}, #{seq}): {detail}")]
    Corrupt { session: String, seq: i64, detail: String },
    /// Another process holds the session's lease: who, until when unless renewed, and
    /// whether this process can look into the holder's (see [`super::lease::refusal`]).
    #[error("{}", super::lease::refusal(.session, .holder, *.expires_at, *.seen))]
    Leased { session: String, holder: Box<super::lease::Holder>, expires_at: i64, seen: bool },
    #[error(
        "session {session} was taken over by {holder} while this process had it open (its lease ran out); \
         nothing of this step was written"
    )]
    LeaseLost { session: String, holder: String },
    #[error(
        "session {session} already has a message at position {seq}: another writer got there first, \
         so nothing of this step was written"
    )]
    PositionTaken { session: String, seq: i64 },
    #[error(
        "session {session} already has compaction view {generation}: another writer got there first, \
         so nothing of this step was written"
    )]
    ViewTaken { session: String, generation: u64 },
    #[error("session store holds a compaction view that cannot be used (session {session}): {detail}")]
    CorruptView { session: String, detail: String },
}

impl StoreError {
    /// The store refused a row because its key is taken (a session id already in use).
    pub fn is_conflict(&self) -> bool {
        match self {
            Self::Sql(rusqlite::Error::SqliteFailure(error, _)) => {
                error.code == rusqlite::ErrorCode::ConstraintViolation
            }
            Self::Postgres(error) => error.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION),
            _ => false,
        }
    }
}
