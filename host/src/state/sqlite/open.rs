//! Opening the SQLite store: WAL, the schema, the checkpointer; and waiting there for other
//! processes opening the same new file at the same instant.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::SqliteStore;
use crate::state::checkpoint::{self, Checkpointer};
use crate::state::group_commit::GroupCommit;
use crate::state::schema;
use crate::state::store::StoreError;

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let failed = |detail: String| StoreError::Open { path: path.display().to_string(), detail };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|error| failed(error.to_string()))?;
        }
        let connection = Connection::open(path).map_err(|error| failed(error.to_string()))?;
        let mut store = Self::init(connection).map_err(|error| failed(error.to_string()))?;
        store
            .connection()
            .pragma_update(None, "wal_autocheckpoint", checkpoint::FALLBACK_PAGES)
            .map_err(|error| failed(error.to_string()))?;
        let checkpointer = Checkpointer::start(path, store.connection.clone());
        store.checkpointer = Some(checkpointer.map_err(|error| failed(error.to_string()))?);
        Ok(store)
    }

    /// A private in-memory database (tests, throwaway sessions).
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(connection: Connection) -> Result<Self, StoreError> {
        // The wait first: switching to WAL takes a lock (and, after a crash, recovers the
        // log), so processes that open the store at the same instant must wait for each
        // other there too rather than fail with "database is locked".
        connection.busy_timeout(BUSY_WAIT)?;
        // WAL: readers never block the writer. synchronous=NORMAL: a killed process loses
        // nothing committed; only a power cut may drop the last transactions.
        until_not_busy(|| connection.pragma_update(None, "journal_mode", "WAL"))?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        schema::create_or_update(&connection)?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
            checkpointer: None,
            steps: GroupCommit::default(),
        })
    }
}

/// How long a connection to the store waits for another's lock, and opening it for other
/// processes opening it at the same instant.
pub(in crate::state) const BUSY_WAIT: Duration = Duration::from_secs(5);

/// `work`, tried again while SQLite answers "busy" without having waited: two connections
/// that each hold a read lock and want the write lock would wait for each other forever, so
/// SQLite refuses one at once instead of calling its busy handler. Once the other is done,
/// the refused one's next try goes through.
fn until_not_busy<T>(mut work: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let deadline = Instant::now() + BUSY_WAIT;
    loop {
        match work() {
            Err(error)
                if error.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            answer => return answer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Processes started at the same instant open one new database together: each must
    /// wait for the others' switch to WAL and schema, never fail with "database is locked"
    /// (SQLite refuses a lock without waiting where two readers would each wait for the
    /// other to let go).
    #[test]
    fn stores_opened_on_one_new_file_at_the_same_instant_all_open() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..30 {
            let path = dir.path().join(format!("s{round}.db"));
            let start = std::sync::Barrier::new(6);
            std::thread::scope(|scope| {
                let opened: Vec<_> = (0..6)
                    .map(|_| {
                        scope.spawn(|| {
                            start.wait();
                            SqliteStore::open(&path).map(|_| ())
                        })
                    })
                    .collect();
                for opening in opened {
                    let answer = opening.join().unwrap();
                    assert!(answer.is_ok(), "round {round}: {answer:?}");
                }
            });
        }
    }
}
