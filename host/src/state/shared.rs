//! What hosts that share a store tell each other through it, so that any of them answers
//! for any session (`serve` on many machines): each session's events, numbered within the
//! session and kept (the newest of them) with the views they left; and the answers to asks
//! given on a host other than the one whose turn waits. The database is the record; a
//! notification only wakes the hosts that follow a session, saying how far its log reached,
//! and each reads what it does not already hold (the host that appended holds its own).
//!
//! Only a store many hosts reach offers it (PostgreSQL): see [`super::SessionStore::shared`].

use super::store::StoreError;

/// One event as the log keeps it: its number in the session (from 1), its type, and the
/// `--json` object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    pub seq: u64,
    pub kind: String,
    pub json: String,
}

/// Events one host appends to one session's log, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    pub session: String,
    /// (type, `--json` object).
    pub events: Vec<(String, String)>,
    /// The plugins' views (JSON) as the last of `events` left them, when one changed them.
    pub views: Option<String>,
    /// The lease the appending host took on the session (holder token, generation): the
    /// batch is dropped unless it is still the session's, so a host that lost the session
    /// writes no events either.
    pub fence: Option<(String, u64)>,
}

/// What a reader is sent of a session's log after the number it has.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogPage {
    /// The oldest event still kept (`None` when none is): a reader that had an older one
    /// missed those between.
    pub oldest_kept: Option<u64>,
    pub events: Vec<LoggedEvent>,
}

/// What a following host is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved<'a> {
    /// Events were appended to the session's log, the newest of them numbered `newest`.
    Appended { session: &'a str, newest: u64 },
    /// One of the session's asks was answered.
    Answered(&'a str),
    /// A caller asked for the session's running turn to be cancelled, wherever it runs.
    Cancel(&'a str),
    /// The follower's connection was (re)made: what moved while it was down was not told,
    /// so every session may have moved.
    Listening,
    /// Nothing; told at least once a second.
    Tick,
}

/// Told what moved; answers whether to go on following.
pub type Woken = Box<dyn FnMut(Moved<'_>) -> bool + Send>;

pub trait SharedLog: Send + Sync {
    /// Appends each batch after its session's last event, all in one transaction, keeps at
    /// least the newest `keep` events of each session (a batch is kept or dropped whole), and
    /// wakes the hosts that follow them; a batch
    /// whose fence is not its session's lease any more is left out. Answers, for each batch
    /// in the order given, the number before its first event (so the writer knows every
    /// event's number without reading them back), or `None` when it was left out.
    fn append(&self, batches: &[Appended], keep: usize) -> Result<Vec<Option<u64>>, StoreError>;
    /// At most `limit` events of `session` after number `after`, oldest first.
    fn events_after(&self, session: &str, after: u64, limit: usize) -> Result<LogPage, StoreError>;
    /// The plugins' views (JSON) as event `seq` left them, as last appended; `None` when no
    /// event has changed a view yet.
    fn views(&self, session: &str) -> Result<Option<(String, u64)>, StoreError>;
    /// The number of `session`'s last event; 0 before the first.
    fn last_event(&self, session: &str) -> Result<u64, StoreError>;
    /// Records that the ask `id` of `session` waits on this host.
    fn ask(&self, session: &str, id: &str) -> Result<(), StoreError>;
    /// Answers the ask `id`, waiting on whichever host, and wakes it; `false` when no such
    /// ask waits unanswered.
    fn answer(&self, session: &str, id: &str, answer: &str) -> Result<bool, StoreError>;
    /// The answer given to the ask `id`, if any yet.
    fn answer_to(&self, session: &str, id: &str) -> Result<Option<String>, StoreError>;
    /// Forgets the ask `id`: answered, timed out, or its turn ended.
    fn forget_ask(&self, session: &str, id: &str) -> Result<(), StoreError>;
    /// Asks the host that runs `session`'s turn, whichever it is, to cancel it. Not kept: a
    /// host that does not hear it (none runs a turn, or its connection was being made again)
    /// lets the turn run, as a cancel that came after the turn's end would.
    fn request_cancel(&self, session: &str) -> Result<(), StoreError>;
    /// Calls `woken` on a thread of its own with each session a host moved (events
    /// appended, this host's own included; an ask answered; a cancel asked), [`Moved::Listening`] each time its
    /// connection is made (a lost one is made again), and [`Moved::Tick`] at least once a
    /// second, until it answers `false`.
    fn follow(&self, woken: Woken) -> Result<(), StoreError>;
}
