use super::StateChange;
use crate::model::Message;

/// A session as stored: its history, its state bag and its counters.
#[derive(Debug, Default)]
pub struct StoredSession {
    pub history: Vec<Message>,
    /// (namespace, key, JSON text)
    pub state: Vec<(String, String, String)>,
    pub model_calls: u64,
}

/// One step to make durable: messages appended since the last commit, state changes, and
/// the counters. Applied atomically: all of it or none.
pub struct Step<'a> {
    /// The history position of `messages[0]`.
    pub first_seq: usize,
    pub messages: &'a [Message],
    pub changes: &'a [StateChange],
    pub model_calls: u64,
}

/// Where sessions live. SQLite by default; the trait leaves room for a shared store.
pub trait SessionStore: Send + Sync {
    /// Records a new, empty session.
    fn create(&self, id: &str) -> Result<(), StoreError>;
    /// The session, or `None` when no session has that id.
    fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError>;
    /// Makes one step durable.
    fn commit(&self, id: &str, step: Step<'_>) -> Result<(), StoreError>;
    /// Session ids, most recently used first.
    fn list(&self, limit: usize) -> Result<Vec<String>, StoreError>;
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("session store at {path}: {detail}")]
    Open { path: String, detail: String },
    #[error("session store: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("session store holds a message that cannot be read (session {session}, #{seq}): {detail}")]
    Corrupt { session: String, seq: i64, detail: String },
}

impl StoreError {
    /// The store refused a row because its key is taken (a session id already in use).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Sql(rusqlite::Error::SqliteFailure(error, _))
            if error.code == rusqlite::ErrorCode::ConstraintViolation)
    }
}
