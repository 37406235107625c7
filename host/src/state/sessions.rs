use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use super::Session;
use super::store::{SessionStore, StoreError};

/// A shared, lockable session: one turn (or command) at a time.
pub type SessionHandle = Arc<tokio::sync::Mutex<Session>>;

/// The sessions this process has open. Every user of a session id gets the same handle, so
/// all operations on one session are serialized; a session nobody holds is dropped from
/// memory (it lives on in the store).
pub struct Sessions {
    store: Arc<dyn SessionStore>,
    open: Mutex<HashMap<String, Weak<tokio::sync::Mutex<Session>>>>,
}

impl Sessions {
    pub fn new(store: Arc<dyn SessionStore>) -> Self {
        Self { store, open: Mutex::new(HashMap::new()) }
    }

    pub fn store(&self) -> &Arc<dyn SessionStore> {
        &self.store
    }

    /// A new session with a fresh id, already recorded in the store.
    pub fn create(&self) -> Result<SessionHandle, StoreError> {
        let id = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        self.store.create(&id)?;
        let handle = Arc::new(tokio::sync::Mutex::new(Session::new(id.clone())));
        let mut open = self.open_map();
        prune(&mut open);
        open.insert(id, Arc::downgrade(&handle));
        Ok(handle)
    }

    /// The session with `id`, from memory if some caller holds it, else from the store.
    /// `None` when no such session exists.
    pub fn open(&self, id: &str) -> Result<Option<SessionHandle>, StoreError> {
        let mut open = self.open_map();
        if let Some(handle) = open.get(id).and_then(Weak::upgrade) {
            return Ok(Some(handle));
        }
        let Some(stored) = self.store.load(id)? else {
            return Ok(None);
        };
        let handle = Arc::new(tokio::sync::Mutex::new(Session::resumed(id.to_owned(), stored)));
        prune(&mut open);
        open.insert(id.to_owned(), Arc::downgrade(&handle));
        Ok(Some(handle))
    }

    fn open_map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Weak<tokio::sync::Mutex<Session>>>> {
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Forgets the sessions nobody holds any more when the map is full and would otherwise grow:
/// a long-running host that served a million sessions keeps only the live ones, and since
/// the capacity doubles whenever a sweep frees too little, each insert costs O(1) amortized.
fn prune(open: &mut HashMap<String, Weak<tokio::sync::Mutex<Session>>>) {
    if open.len() < SWEEP_FLOOR || open.len() < open.capacity() {
        return;
    }
    open.retain(|_, weak| weak.strong_count() > 0);
}

/// Below this many entries the map is never swept: it is too small to matter.
const SWEEP_FLOOR: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::sqlite::SqliteStore;

    #[test]
    fn sessions_nobody_holds_do_not_accumulate_in_memory() {
        let sessions = Sessions::new(Arc::new(SqliteStore::in_memory().unwrap()));
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
}
