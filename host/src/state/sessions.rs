use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Session;
use super::bag::Seeds;
use super::lease::Leases;
use super::store::{SessionStore, StoreError, StoredSession};
use crate::unpoisoned::{LockUnpoisoned as _, RwLockUnpoisoned as _};

/// A shared, lockable session: one turn (or command) at a time. `L` is what the layer
/// above keeps a session in (the agent's live session, which holds the [`Session`] beside
/// its caches); a plain [`Session`] by default.
pub type SessionHandle<L = Session> = Arc<tokio::sync::Mutex<L>>;

/// The sessions this process has open. Every user of a session id gets the same handle, so
/// all operations on one session are serialized; a session nobody holds is dropped from
/// memory (it lives on in the store). An open session is leased to this process in the store,
/// so that another process cannot write it at the same time (see `lease.rs`).
///
/// A handle holds an `L` made from the [`Session`] (`L::from`): the store's layer decides
/// who shares a session and when it is loaded, without knowing what is kept beside it.
pub struct Sessions<L = Session> {
    store: Arc<dyn SessionStore>,
    leases: Leases,
    open: Mutex<HashMap<String, Weak<tokio::sync::Mutex<L>>>>,
    /// What every session created from now on starts with in its bag (see [`Seeds`]).
    seeds: RwLock<Arc<Seeds>>,
}

/// The last id handed out, as a number: ids are strictly increasing within a process.
static LAST_ID: AtomicU64 = AtomicU64::new(0);

/// How long a lease lasts unless renewed, when the config does not say.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

impl<L: From<Session>> Sessions<L> {
    pub fn new(store: Arc<dyn SessionStore>) -> Self {
        Self::with_lease(store, DEFAULT_LEASE)
    }

    /// Sessions whose leases last `lease` unless renewed (`[storage] lease_secs`).
    pub fn with_lease(store: Arc<dyn SessionStore>, lease: Duration) -> Self {
        let leases = Leases::start(store.clone(), lease);
        Self { store, leases, open: Mutex::new(HashMap::new()), seeds: RwLock::default() }
    }

    /// Sessions created from now on start with `seeds` (replacing the last ones given).
    pub fn seed_new_sessions(&self, seeds: Seeds) {
        *self.seeds.write_unpoisoned() = Arc::new(seeds);
    }

    pub fn store(&self) -> &Arc<dyn SessionStore> {
        &self.store
    }

    /// How many sessions this process took over from a holder that had not let go.
    pub fn takeovers(&self) -> u64 {
        self.leases.takeovers()
    }

    /// A new session with a fresh id, already recorded in the store (and leased).
    pub fn create(&self) -> Result<SessionHandle<L>, StoreError> {
        self.create_with_id(new_session_id())
    }

    /// A new session with `id`, drawn earlier by [`new_session_id`] (a child agent's, handed
    /// to the plugin that started it before the session is made), recorded and leased.
    pub fn create_with_id(&self, id: String) -> Result<SessionHandle<L>, StoreError> {
        let lease = self.leases.create(&id)?;
        let session = Session::new(id, lease);
        // A copy or a fork takes its source's state instead, and a session made earlier keeps
        // its own: only a session made now starts from the seeds.
        session.bag().seed(&self.seeds.read_unpoisoned());
        self.keep_open(session)
    }

    /// A new session holding a copy of `contents` (an imported document, say), recorded in
    /// the store in one transaction, and open as if resumed.
    pub fn create_copy(&self, contents: StoredSession) -> Result<SessionHandle<L>, StoreError> {
        // Checked before anything is written: a session is not recorded that cannot be opened.
        if let Some(stored) = &contents.view {
            crate::compacted_history::viewed(Some(&stored.view), &contents.history, &contents.summaries)
                .map_err(|error| StoreError::CorruptView {
                    session: "being copied".into(),
                    detail: error.to_string(),
                })?;
        }
        let id = new_session_id();
        let lease = self.leases.create_copy(&id, &contents)?;
        self.keep_open(Session::resumed(id, contents, lease)?)
    }

    /// A new session from a copy of `source`'s history, state bag and compaction view, as
    /// committed; `source` itself is only read. `None` when no session has that id.
    pub fn fork(&self, source: &str) -> Result<Option<SessionHandle<L>>, StoreError> {
        let Some(contents) = self.store.load(source)? else { return Ok(None) };
        self.create_copy(contents).map(Some)
    }

    fn keep_open(&self, session: Session) -> Result<SessionHandle<L>, StoreError> {
        let id = session.id().to_owned();
        let handle = Arc::new(tokio::sync::Mutex::new(L::from(session)));
        let mut open = self.open_map();
        prune(&mut open);
        open.insert(id, Arc::downgrade(&handle));
        Ok(handle)
    }

    /// The session with `id`, from memory if some caller holds it, else from the store.
    /// `None` when no such session exists; [`StoreError::Leased`] when another process has it
    /// open.
    pub fn open(&self, id: &str) -> Result<Option<SessionHandle<L>>, StoreError> {
        let mut open = self.open_map();
        if let Some(handle) = open.get(id).and_then(Weak::upgrade) {
            return Ok(Some(handle));
        }
        // The lease first: what is loaded then is what no other process is changing.
        let lease = self.leases.acquire(id)?;
        let Some(stored) = self.store.load(id)? else {
            return Ok(None);
        };
        let session = Session::resumed(id.to_owned(), stored, lease)?;
        let handle = Arc::new(tokio::sync::Mutex::new(L::from(session)));
        prune(&mut open);
        open.insert(id.to_owned(), Arc::downgrade(&handle));
        Ok(Some(handle))
    }

    fn open_map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Weak<tokio::sync::Mutex<L>>>> {
        self.open.lock_unpoisoned()
    }
}

/// A fresh id that sorts by creation time: 48 bits of milliseconds since the epoch and
/// 16 random bits (counted up within a process), then 64 more random bits, in hex — an
/// id cannot be guessed from another (an older id is the first half alone, and opens as
/// ever). Time-ordered ids keep the store's inserts at the right edge of its B-trees, so
/// the pages a step writes stay hot in the cache instead of landing on a random leaf each
/// time (the load bench's gain is in BENCHMARKS.md).
pub fn new_session_id() -> String {
    let millis = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let random = uuid::Uuid::new_v4().as_u128();
    let drawn = (millis << 16) | (random as u64 & 0xffff);
    let previous = LAST_ID.fetch_max(drawn, Ordering::Relaxed);
    let value = if drawn > previous { drawn } else { LAST_ID.fetch_add(1, Ordering::Relaxed) + 1 };
    // The system's generator, as for a UUID; it fails only where no source exists at all.
    let tail = getrandom::u64().unwrap_or((random >> 64) as u64);
    format!("{value:016x}{tail:016x}")
}

/// Forgets the sessions nobody holds any more when the map is full and would otherwise grow:
/// a long-running host that served a million sessions keeps only the live ones, and since
/// the capacity doubles whenever a sweep frees too little, each insert costs O(1) amortized.
fn prune<L>(open: &mut HashMap<String, Weak<tokio::sync::Mutex<L>>>) {
    if open.len() < SWEEP_FLOOR || open.len() < open.capacity() {
        return;
    }
    open.retain(|_, weak| weak.strong_count() > 0);
}

/// Below this many entries the map is never swept: it is too small to matter.
const SWEEP_FLOOR: usize = 64;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::state::sqlite::SqliteStore;
    use crate::state::test_stores::{TestDatabase, both_stores};

    #[test]
    fn ids_are_unique_and_sort_by_creation() {
        let sessions: Sessions = Sessions::new(Arc::new(SqliteStore::in_memory().unwrap()));
        let ids: Vec<String> =
            (0..3_000).map(|_| sessions.create().unwrap().try_lock().unwrap().id().to_owned()).collect();
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "ids in creation order");
        assert!(ids.iter().all(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())));
    }

    #[test]
    fn an_id_carries_sixty_four_random_bits_after_its_time() {
        let sessions: Sessions = Sessions::new(Arc::new(SqliteStore::in_memory().unwrap()));
        let ids: Vec<String> =
            (0..200).map(|_| sessions.create().unwrap().try_lock().unwrap().id().to_owned()).collect();
        let tails: Vec<u64> =
            ids.iter().map(|id| u64::from_str_radix(id.get(16..).unwrap_or_default(), 16).unwrap()).collect();
        let distinct: std::collections::HashSet<&u64> = tails.iter().collect();
        assert_eq!(distinct.len(), tails.len(), "{ids:?}");
        // Drawn, not counted: consecutive ids do not differ by a small step.
        assert!(tails.windows(2).all(|pair| pair[0].abs_diff(pair[1]) > 1 << 16), "{ids:?}");
        // Each of the 64 bits is set in some id and clear in another.
        let (any, all) = tails.iter().fold((0, u64::MAX), |(any, all), tail| (any | tail, all & tail));
        assert_eq!((any, all), (u64::MAX, 0), "{ids:?}");
    }

    #[test]
    fn a_new_session_starts_with_the_seeds_given_before_it_was_made() {
        let sessions: Sessions = Sessions::new(Arc::new(SqliteStore::in_memory().unwrap()));
        let seeds = |value: &str| {
            vec![("modes".to_owned(), BTreeMap::from([("default".to_owned(), format!("\"{value}\""))]))]
        };
        let before = sessions.create().unwrap();
        sessions.seed_new_sessions(seeds("plan"));
        let seeded = sessions.create().unwrap();
        sessions.seed_new_sessions(seeds("execute"));
        let reseeded = sessions.create().unwrap();
        let default = |handle: &SessionHandle| handle.try_lock().unwrap().bag().get("modes", "default");
        assert_eq!(default(&before), None, "a session made earlier keeps what it holds");
        assert_eq!(default(&seeded).as_deref(), Some("\"plan\""));
        assert_eq!(default(&reseeded).as_deref(), Some("\"execute\""), "the last seeds given");
        assert_eq!(default(&seeded).as_deref(), Some("\"plan\""), "not re-seeded");
        // Written like any write, so the session's first step stores them.
        let changes = seeded.try_lock().unwrap().bag().take_changes();
        assert_eq!(changes.len(), 1, "{changes:?}");
        let forked = sessions.fork(before.try_lock().unwrap().id()).unwrap().expect("forked");
        assert_eq!(default(&forked), None, "a fork takes its source's state, not the seeds");
    }

    #[test]
    fn a_session_under_an_older_shorter_id_is_still_opened() {
        let store = Arc::new(SqliteStore::in_memory().unwrap());
        let older = "0190a1b2c3d4e5f6";
        store.create(older, &crate::state::lease::Holder::this_process(), "c", 0).unwrap();
        let sessions: Sessions = Sessions::new(store);
        let opened = sessions.open(older).unwrap().expect("found under its old id");
        assert_eq!(opened.try_lock().unwrap().id(), older);
    }

    #[test]
    fn sessions_nobody_holds_do_not_accumulate_in_memory() {
        let sessions: Sessions = Sessions::new(Arc::new(SqliteStore::in_memory().unwrap()));
        let kept: Vec<_> = (0..10).map(|_| sessions.create().unwrap()).collect();
        for _ in 0..2_000 {
            drop(sessions.create().unwrap());
        }
        let open = sessions.open_map().len();
        assert!(open <= 4 * SWEEP_FLOOR, "{open} entries kept for 10 live sessions");
        for handle in &kept {
            let id = handle.try_lock().unwrap().id().to_owned();
            assert!(Arc::ptr_eq(handle, &sessions.open(&id).unwrap().unwrap()), "a live session is shared");
        }
    }

    both_stores!(a_session_open_in_one_process_is_refused_to_another_until_it_is_closed);

    fn a_session_open_in_one_process_is_refused_to_another_until_it_is_closed(db: &TestDatabase) {
        let first: Sessions = Sessions::new(db.open());
        let second: Sessions = Sessions::new(db.open());
        let handle = first.create().unwrap();
        let id = handle.try_lock().unwrap().id().to_owned();
        let refused = second.open(&id).err().expect("refused while the first has it open");
        let holder = first.leases.holder();
        assert!(
            matches!(&refused, StoreError::Leased { session, holder: named, .. } if session == &id && **named == *holder),
            "{refused:?}"
        );
        assert!(refused.to_string().contains(&format!("in use by {holder}: ")), "{refused}");
        assert!(
            Arc::ptr_eq(&handle, &first.open(&id).unwrap().unwrap()),
            "the holder itself shares its copy"
        );
        drop(handle);
        let reopened = second.open(&id).unwrap().expect("free once the first closed it");
        assert!(reopened.try_lock().unwrap().was_resumed());
        assert!(first.open(&id).is_err(), "and now the first is the one kept out");
    }
}
