//! WAL checkpoints off the hot path. SQLite's automatic checkpoint runs inside whichever
//! commit crosses the threshold — copying pages back into the database and syncing it, a
//! large share of a step commit's time and its worst tail, on the agent loop (see
//! BENCHMARKS.md). Here a thread with its own connection checkpoints in the background instead;
//! durability is unchanged (a commit is durable once it is in the WAL).
//!
//! The WAL file is reused from its start only when a commit begins with every frame in it
//! copied back. Under a steady stream of commits a passive checkpoint rarely leaves it so
//! (commits land while it copies, and the WAL was seen to grow without bound between restarts),
//! and a long WAL makes every commit dearer. So after each pass the thread copies the few
//! frames that landed meanwhile while holding the writer's lock: a short pause for one commit.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::unpoisoned::LockUnpoisoned as _;
use rusqlite::Connection;

/// How often the background checkpoint runs while commits keep coming.
const INTERVAL: Duration = Duration::from_millis(200);
/// WAL pages at which a commit still checkpoints itself: a safety net for when the
/// background thread cannot keep up, far above SQLite's default of 1000.
pub(super) const FALLBACK_PAGES: u32 = 16_000;

/// The background checkpointer of one database; stops (after a last checkpoint) on drop.
pub(super) struct Checkpointer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    /// Commits since the last checkpoint.
    dirty: AtomicBool,
    stop: Mutex<bool>,
    wake: Condvar,
}

impl Checkpointer {
    /// Starts checkpointing the WAL database at `path`, already open in WAL mode by `writer`,
    /// the one connection that commits.
    pub(super) fn start(path: &Path, writer: Arc<Mutex<Connection>>) -> rusqlite::Result<Self> {
        let connection = Connection::open(path)?;
        connection.busy_timeout(super::sqlite::BUSY_WAIT)?;
        let shared = Arc::new(Shared::default());
        let state = shared.clone();
        let thread = std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || run(&connection, &writer, &state))
            .expect("the checkpoint thread must start");
        Ok(Self { shared, thread: Some(thread) })
    }

    /// Notes that a commit added to the WAL.
    pub(super) fn committed(&self) {
        self.shared.dirty.store(true, Ordering::Relaxed);
    }
}

fn run(connection: &Connection, writer: &Mutex<Connection>, shared: &Shared) {
    let mut stop = shared.stop.lock_unpoisoned();
    loop {
        if *stop {
            break;
        }
        stop = shared.wake.wait_timeout(stop, INTERVAL).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        if shared.dirty.swap(false, Ordering::Relaxed) {
            checkpoint(connection);
            let _writer = writer.lock_unpoisoned();
            checkpoint(connection);
        }
    }
    checkpoint(connection);
}

/// PASSIVE: copies what it can without waiting for, or blocking, the writer.
fn checkpoint(connection: &Connection) {
    if let Err(error) = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
        tracing::warn!(%error, "background WAL checkpoint failed; commits will checkpoint themselves");
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        *self.shared.stop.lock_unpoisoned() = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
