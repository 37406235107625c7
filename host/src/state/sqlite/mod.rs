//! The default [`SessionStore`]: one embedded SQLite database in WAL mode. Each step is
//! written all or nothing, so a killed process leaves every session at a step boundary; steps
//! of different sessions that arrive together share one transaction ([`step`]).

mod open;
mod step;

pub(in crate::state) use open::BUSY_WAIT;

use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};

use super::checkpoint::Checkpointer;
use super::group_commit::GroupCommit;
use super::lease::{Fence, HeldLease, Holder, HolderRole, LeaseAnswer, Taken, now_millis};
use super::listing::{SessionEntry, title};
use super::message_rows::MessageRow;
use super::store::{SessionStore, Step, StoreError, StoredSession, StoredView};
use crate::compacted_history::{CompactedHistory, Summaries};
use crate::conversation::{Message, Role};
use crate::events::TokenUsage;
use crate::unpoisoned::LockUnpoisoned as _;
use step::ReadyStep;

pub struct SqliteStore {
    /// The one connection that writes; shared with the checkpointer only as a lock.
    connection: Arc<Mutex<Connection>>,
    /// Checkpoints the WAL in the background (file databases only).
    checkpointer: Option<Checkpointer>,
    /// The steps waiting for the next transaction.
    steps: GroupCommit<ReadyStep>,
}

impl SqliteStore {
    fn connection(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.connection.lock_unpoisoned()
    }
}

/// Runs `work` in one write transaction. BEGIN and COMMIT are cached statements like the
/// rest: a step is committed several times per model call, and parsing them anew each time
/// was a measurable part of it. IMMEDIATE takes the write lock up front: a transaction that
/// reads first (the lease check) and writes after would otherwise fail with "database is
/// locked" at once, without waiting, whenever another process committed in between.
pub(super) fn in_transaction<T>(
    connection: &Connection,
    work: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    connection.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    let result = work(connection)
        .and_then(|value| Ok(connection.prepare_cached("COMMIT")?.execute([]).map(|_| value)?));
    if result.is_err() && !connection.is_autocommit() {
        // Leaves nothing half-done for the next step; its own error is the one that matters.
        let _ = connection.prepare_cached("ROLLBACK").and_then(|mut rollback| rollback.execute([]));
    }
    result
}

/// The state rows naming owner `?1`. The namespace and key are written out, not bound, so
/// that SQLite can use the partial index `state_by_owner` (see `schema.rs`).
const OWNED_BY: &str = "state.namespace = 'agent-host.serve' AND state.key = 'owner' AND state.value = ?1";

/// A session as a listing shows it (`FROM sessions` follows): its first user message read
/// alone (its first bytes: a title is short) and its size from the last position, through the
/// messages' key, never a scan of their bodies; whether its lease runs past `now`, the
/// parameter named.
fn session_entry_select(now: &str) -> String {
    format!(
        "SELECT sessions.id, sessions.updated_at,
    (SELECT substr(json_extract(body, '$.content'), 1, 1000) FROM messages
     WHERE session_id = sessions.id AND json_extract(body, '$.role') = 'user' ORDER BY seq LIMIT 1),
    (SELECT MAX(seq) + 1 FROM messages WHERE session_id = sessions.id),
    EXISTS (SELECT 1 FROM session_leases WHERE session_id = sessions.id AND expires_at > {now})"
    )
}

fn session_entry(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionEntry> {
    let prompt: Option<String> = row.get(2)?;
    let messages: Option<i64> = row.get(3)?;
    Ok(SessionEntry {
        id: row.get(0)?,
        updated_at: row.get::<_, i64>(1)? / 1_000,
        title: prompt.map(|prompt| title(&prompt)),
        messages: messages.unwrap_or(0).max(0) as u64,
        held: row.get(4)?,
    })
}

/// An owner as its state value holds it: a JSON string.
fn owner_value(owner: &str) -> String {
    serde_json::Value::from(owner).to_string()
}

/// Takes the lease on `id` unless another holder's is live (see [`SessionStore::lease`]),
/// as the session's next generation. A let-go lease has `expires_at` 0, so it is free, and
/// taking it is no takeover. (Every `SET` reads the row as it was.)
const TAKE_LEASE: &str = "
INSERT INTO session_leases (session_id, token, claim, pid, host, pid_namespace, expires_at, generation, took_over, role)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, 0, ?10)
ON CONFLICT (session_id) DO UPDATE SET
    token = excluded.token, claim = excluded.claim, pid = excluded.pid, host = excluded.host,
    pid_namespace = excluded.pid_namespace, expires_at = excluded.expires_at, role = excluded.role,
    generation = session_leases.generation + 1,
    took_over = (session_leases.token <> excluded.token AND session_leases.expires_at <> 0)
WHERE session_leases.token = excluded.token OR session_leases.expires_at <= ?8 OR session_leases.token = ?9
RETURNING generation, took_over";

/// Runs [`TAKE_LEASE`]: the taking, or `None` when another holder's lease is live.
fn take_lease(
    connection: &Connection,
    id: &str,
    holder: &Holder,
    claim: &str,
    expires_at: i64,
    replacing: Option<&str>,
) -> Result<Option<Taken>, StoreError> {
    let values = params![
        id,
        holder.token,
        claim,
        holder.pid,
        holder.host,
        holder.pid_namespace,
        expires_at,
        now_millis(),
        replacing,
        holder.role.as_str()
    ];
    let taken = connection
        .prepare_cached(TAKE_LEASE)?
        .query_row(values, |row| {
            Ok(Taken { generation: row.get::<_, i64>(0)?.max(0) as u64, took_over: row.get(1)? })
        })
        .optional()?;
    Ok(taken)
}

/// The lease of a new session: no other holder can have it.
fn first_lease(taken: Option<Taken>, id: &str) -> Result<Taken, StoreError> {
    taken.ok_or_else(|| StoreError::Unavailable(format!("session {id}'s lease was taken as it was made")))
}

/// The lease on a session, as stored.
fn held_lease(connection: &Connection, id: &str) -> Result<Option<HeldLease>, StoreError> {
    Ok(connection
        .prepare_cached(
            "SELECT token, pid, host, pid_namespace, expires_at, role FROM session_leases WHERE session_id = ?1",
        )?
        .query_row([id], |row| {
            Ok(HeldLease {
                holder: Holder {
                    token: row.get(0)?,
                    pid: row.get(1)?,
                    host: row.get(2)?,
                    pid_namespace: row.get(3)?,
                    role: HolderRole::from_stored(&row.get::<_, String>(5)?),
                },
                expires_at: row.get(4)?,
            })
        })
        .optional()?)
}

/// Fails unless the session's lease is still the taking `fence` names: a writer whose lease
/// ran out and was taken must not write on, even once the taker has let it go.
fn check_lease(connection: &Connection, id: &str, fence: Fence<'_>) -> Result<(), StoreError> {
    let generation: Option<i64> = connection
        .prepare_cached(
            "SELECT generation FROM session_leases WHERE session_id = ?1 AND token = ?2 AND expires_at <> 0",
        )?
        .query_row(params![id, fence.token], |row| row.get(0))
        .optional()?;
    if generation == Some(fence.generation as i64) {
        return Ok(());
    }
    Err(super::lease::lost(id, held_lease(connection, id)?))
}

/// Appends `messages` at `first_seq` on, each reply with what its call used (`usage`, by
/// history position). A plain INSERT: a position is written once. A writer that believed a
/// taken position was next lost a race, and must hear so instead of replacing the row.
fn insert_messages(connection: &Connection, id: &str, rows: &[MessageRow]) -> Result<(), StoreError> {
    let mut insert = connection
        .prepare_cached("INSERT INTO messages (session_id, seq, body, usage) VALUES (?1, ?2, ?3, ?4)")?;
    for MessageRow { seq, body, usage } in rows {
        insert.execute(params![id, seq, body, usage]).map_err(|error| {
            let error = StoreError::from(error);
            if error.is_conflict() {
                StoreError::PositionTaken { session: id.to_owned(), seq: *seq }
            } else {
                error
            }
        })?;
    }
    Ok(())
}

fn insert_summaries(
    connection: &Connection,
    id: &str,
    summaries: &[(u64, Message)],
) -> Result<(), StoreError> {
    let mut insert =
        connection.prepare_cached("INSERT INTO summaries (session_id, id, body) VALUES (?1, ?2, ?3)")?;
    for (number, message) in summaries {
        let body = serde_json::to_string(message).expect("messages always serialize");
        insert.execute(params![id, *number as i64, body])?;
    }
    Ok(())
}

/// Writes `view` as the session's `generation`; a generation already written fails the
/// step with [`StoreError::ViewTaken`], like a position taken.
fn insert_view(
    connection: &Connection,
    id: &str,
    generation: u64,
    view: &CompactedHistory,
) -> Result<(), StoreError> {
    let entries = serde_json::to_string(&view.entries).expect("view entries always serialize");
    connection
        .prepare_cached(
            "INSERT INTO views (session_id, generation, covers, entries, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![id, generation as i64, view.covers as i64, entries, now_millis()])
        .map_err(|error| {
            let error = StoreError::from(error);
            if error.is_conflict() { StoreError::ViewTaken { session: id.to_owned(), generation } } else { error }
        })?;
    Ok(())
}

fn load_summaries(connection: &Connection, id: &str) -> Result<Summaries, StoreError> {
    let mut statement =
        connection.prepare_cached("SELECT id, body FROM summaries WHERE session_id = ?1 ORDER BY id")?;
    let rows = statement.query_map([id], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))?;
    let mut summaries = Summaries::new();
    for row in rows {
        let (number, body) = row?;
        let message = serde_json::from_str(&body).map_err(|error| StoreError::CorruptView {
            session: id.to_owned(),
            detail: format!("summary #{number}: {error}"),
        })?;
        summaries.insert(number as u64, message);
    }
    Ok(summaries)
}

/// The session's newest view, if it has one.
fn load_view(connection: &Connection, id: &str) -> Result<Option<StoredView>, StoreError> {
    let newest = connection
        .prepare_cached(
            "SELECT generation, covers, entries FROM views WHERE session_id = ?1 ORDER BY generation DESC LIMIT 1",
        )?
        .query_row([id], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get::<_, String>(2)?)))
        .optional()?;
    let Some((generation, covers, entries)) = newest else { return Ok(None) };
    let entries = serde_json::from_str(&entries).map_err(|error| StoreError::CorruptView {
        session: id.to_owned(),
        detail: format!("view {generation}: {error}"),
    })?;
    Ok(Some(StoredView {
        generation: generation as u64,
        view: CompactedHistory { covers: covers as usize, entries },
    }))
}

/// Where a test stops a commit half-way to kill its process there: the commit waits forever
/// at the point `AGENT_HOST_TEST_STALL_AT` names, after creating the file
/// `AGENT_HOST_TEST_STALLED` names. Nothing outside the crate's own tests.
#[cfg(test)]
fn fault_point(name: &str) {
    if std::env::var("AGENT_HOST_TEST_STALL_AT").is_ok_and(|at| at == name) {
        if let Ok(marker) = std::env::var("AGENT_HOST_TEST_STALLED") {
            // Written beside it and renamed into place: the test reads the marker as soon as
            // it exists, and a file written in place can exist before it holds the name.
            let written = format!("{marker}.writing");
            std::fs::write(&written, name).expect("the test's marker file can be written");
            std::fs::rename(&written, marker).expect("the test's marker file can be moved into place");
        }
        loop {
            std::thread::park();
        }
    }
}

#[cfg(not(test))]
fn fault_point(_name: &str) {}

impl SessionStore for SqliteStore {
    fn create(&self, id: &str, holder: &Holder, claim: &str, expires_at: i64) -> Result<Taken, StoreError> {
        let now = now_millis();
        let connection = self.connection();
        in_transaction(&connection, |transaction| {
            // Cached like the step statements: a new session every few model calls would
            // otherwise parse this each time, a visible share of the load bench's CPU.
            transaction
                .prepare_cached("INSERT INTO sessions (id, created_at, updated_at) VALUES (?1, ?2, ?2)")?
                .execute(params![id, now])?;
            first_lease(take_lease(transaction, id, holder, claim, expires_at, None)?, id)
        })
    }

    fn lease(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        replacing: Option<&str>,
    ) -> Result<LeaseAnswer, StoreError> {
        let connection = self.connection();
        in_transaction(&connection, |transaction| {
            if let Some(taken) = take_lease(transaction, id, holder, claim, expires_at, replacing)? {
                return Ok(LeaseAnswer::Taken(taken));
            }
            let held = held_lease(transaction, id)?;
            held.map(LeaseAnswer::HeldBy).ok_or_else(|| {
                StoreError::Unavailable(format!("session {id}'s lease was refused but no one holds it"))
            })
        })
    }

    fn renew_leases(&self, token: &str, expires_at: i64) -> Result<(), StoreError> {
        self.connection()
            .prepare_cached("UPDATE session_leases SET expires_at = ?2 WHERE token = ?1 AND expires_at <> 0")?
            .execute(params![token, expires_at])?;
        Ok(())
    }

    fn release_lease(&self, id: &str, claim: &str) -> Result<(), StoreError> {
        self.connection()
            .prepare_cached("UPDATE session_leases SET expires_at = 0 WHERE session_id = ?1 AND claim = ?2")?
            .execute(params![id, claim])?;
        Ok(())
    }

    fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        let connection = self.connection();
        // One read transaction: a session another process is writing (the source of a fork)
        // is read as of one step, its messages, state and view together.
        let transaction = connection.unchecked_transaction()?;
        let Some(recorded_calls) = transaction
            .query_row("SELECT model_calls FROM sessions WHERE id = ?1", [id], |row| row.get::<_, i64>(0))
            .optional()?
        else {
            return Ok(None);
        };
        let mut history = Vec::new();
        let mut usage = TokenUsage::default();
        let mut reply_usage = Vec::new();
        let mut statement = transaction
            .prepare_cached("SELECT seq, body, usage FROM messages WHERE session_id = ?1 ORDER BY seq")?;
        let rows = statement.query_map([id], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, Option<String>>(2)?))
        })?;
        for row in rows {
            let (seq, body, used) = row?;
            let corrupt = |detail: String| StoreError::Corrupt { session: id.to_owned(), seq, detail };
            let message: Message = serde_json::from_str(&body).map_err(|error| corrupt(error.to_string()))?;
            if let Some(used) = used {
                let used: TokenUsage =
                    serde_json::from_str(&used).map_err(|error| corrupt(format!("its usage: {error}")))?;
                usage = usage.plus(used);
                reply_usage.push((history.len(), used));
            }
            history.push(message);
        }
        drop(statement);
        let mut statement = transaction.prepare_cached(
            "SELECT namespace, key, value FROM state WHERE session_id = ?1 ORDER BY namespace, key",
        )?;
        let state = statement
            .query_map([id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        drop(statement);
        let summaries = load_summaries(&transaction, id)?;
        let view = load_view(&transaction, id)?;
        // Every model call that returned left exactly one assistant message, committed in the
        // same step as the count; the column is only as recent as the last turn's start (and a
        // count never goes back).
        let replies = history.iter().filter(|message| message.role == Role::Assistant).count() as u64;
        let model_calls = replies.max(recorded_calls as u64);
        Ok(Some(StoredSession { history, state, model_calls, usage, reply_usage, summaries, view }))
    }

    fn create_copy(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        contents: &StoredSession,
        last_used: Option<i64>,
    ) -> Result<Taken, StoreError> {
        let now = now_millis();
        let connection = self.connection();
        in_transaction(&connection, |transaction| {
            transaction
                .prepare_cached(
                    "INSERT INTO sessions (id, created_at, updated_at, model_calls) VALUES (?1, ?2, ?3, ?4)",
                )?
                .execute(params![id, now, last_used.unwrap_or(now), contents.model_calls as i64])?;
            let taken = first_lease(take_lease(transaction, id, holder, claim, expires_at, None)?, id)?;
            insert_messages(transaction, id, &step::rows(0, &contents.history, &contents.reply_usage))?;
            let mut insert = transaction.prepare_cached(
                "INSERT INTO state (session_id, namespace, key, value) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (namespace, key, value) in &contents.state {
                insert.execute(params![id, namespace, key, value])?;
            }
            let summaries: Vec<(u64, Message)> =
                contents.summaries.iter().map(|(number, message)| (*number, message.clone())).collect();
            insert_summaries(transaction, id, &summaries)?;
            if let Some(stored) = &contents.view {
                insert_view(transaction, id, stored.generation, &stored.view)?;
            }
            Ok(taken)
        })
    }

    fn commit(&self, id: &str, step: Step<'_>) -> Result<(), StoreError> {
        self.steps.commit(self, ReadyStep::new(id, step))
    }

    fn list(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        let connection = self.connection();
        let mut statement =
            connection.prepare_cached("SELECT id FROM sessions ORDER BY updated_at DESC LIMIT ?1")?;
        let ids = statement.query_map([limit as i64], |row| row.get(0))?.collect::<Result<_, _>>()?;
        Ok(ids)
    }

    fn entries(&self, limit: usize) -> Result<Vec<SessionEntry>, StoreError> {
        let connection = self.connection();
        let mut statement = connection.prepare_cached(&format!(
            "{} FROM sessions ORDER BY sessions.updated_at DESC LIMIT ?1",
            session_entry_select("?2")
        ))?;
        let entries = statement
            .query_map(params![limit as i64, now_millis()], session_entry)?
            .collect::<Result<_, _>>()?;
        Ok(entries)
    }

    fn entries_owned(&self, owner: &str, limit: usize) -> Result<Vec<SessionEntry>, StoreError> {
        let connection = self.connection();
        let mut statement = connection.prepare_cached(&format!(
            "{} FROM state JOIN sessions ON sessions.id = state.session_id
             WHERE {OWNED_BY} ORDER BY sessions.updated_at DESC LIMIT ?2",
            session_entry_select("?3")
        ))?;
        let entries = statement
            .query_map(params![owner_value(owner), limit as i64, now_millis()], session_entry)?
            .collect::<Result<_, _>>()?;
        Ok(entries)
    }

    fn count_owned(&self, owner: &str, up_to: usize) -> Result<usize, StoreError> {
        let connection = self.connection();
        // Counted whole: SQLite counts a covering index's entries faster than it hands them one
        // by one to a bounded subquery.
        let mut statement =
            connection.prepare_cached(&format!("SELECT COUNT(*) FROM state WHERE {OWNED_BY}"))?;
        let count: i64 = statement.query_row(params![owner_value(owner)], |row| row.get(0))?;
        Ok(usize::try_from(count).unwrap_or(usize::MAX).min(up_to))
    }

    fn state_value(&self, id: &str, namespace: &str, key: &str) -> Result<Option<String>, StoreError> {
        let value = self
            .connection()
            .prepare_cached("SELECT value FROM state WHERE session_id = ?1 AND namespace = ?2 AND key = ?3")?
            .query_row(params![id, namespace, key], |row| row.get(0))
            .optional()?;
        Ok(value)
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let connection = self.connection();
        let transaction = connection.unchecked_transaction()?;
        for table in ["messages", "state", "summaries", "views", "session_leases"] {
            transaction.execute(&format!("DELETE FROM {table} WHERE session_id = ?1"), [id])?;
        }
        let deleted = transaction.execute("DELETE FROM sessions WHERE id = ?1", [id])? == 1;
        transaction.commit()?;
        Ok(deleted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_query_reaches_each_message_by_key_without_a_scan() {
        let store = SqliteStore::in_memory().unwrap();
        let plan: Vec<String> = store
            .connection()
            .prepare(&format!("EXPLAIN QUERY PLAN {} FROM sessions", session_entry_select("?1")))
            .unwrap()
            .query_map([0], |row| row.get(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(plan.iter().all(|step| !step.contains("SCAN messages")), "{plan:?}");
        assert!(plan.iter().any(|step| step.contains("SEARCH messages USING PRIMARY KEY")), "{plan:?}");
    }

    #[test]
    fn sessions_are_counted_by_owner_through_the_owner_index() {
        let store = SqliteStore::in_memory().unwrap();
        let plan: Vec<String> = store
            .connection()
            .prepare(&format!("EXPLAIN QUERY PLAN SELECT COUNT(*) FROM state WHERE {OWNED_BY}"))
            .unwrap()
            .query_map(["\"alice\""], |row| row.get(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(plan.iter().any(|step| step.contains("state_by_owner")), "{plan:?}");
    }

    #[test]
    fn usage_is_kept_beside_its_reply_and_added_up_on_load_in_an_older_database_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            // A database an older version wrote: `messages` without `usage`, one session in it.
            let old = Connection::open(&path).unwrap();
            old.execute_batch(
                "CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL,
                     updated_at INTEGER NOT NULL, model_calls INTEGER NOT NULL DEFAULT 0);
                 CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL,
                     body TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
                 INSERT INTO sessions VALUES ('before', 1, 1, 1);
                 INSERT INTO messages VALUES ('before', 0, '{\"role\":\"user\",\"content\":\"hi\"}');
                 INSERT INTO messages VALUES ('before', 1, '{\"role\":\"assistant\",\"content\":\"hello\"}');",
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        let before = store.load("before").unwrap().unwrap();
        assert_eq!(before.history, [Message::user("hi"), Message::assistant("hello", vec![])]);
        assert_eq!(before.usage, TokenUsage::default(), "nothing was recorded then");
        assert_eq!(before.reply_usage.last(), None);

        let first = TokenUsage {
            input_tokens: 1_200,
            output_tokens: 30,
            cache_read_tokens: 1_000,
            cache_write_tokens: 0,
        };
        let second = TokenUsage {
            input_tokens: 1_300,
            output_tokens: 7,
            cache_read_tokens: 0,
            cache_write_tokens: 250,
        };
        let messages = [
            Message::user("go"),
            Message::assistant("", vec![]),
            Message::user("again"),
            Message::assistant("done", vec![]),
        ];
        store
            .commit(
                "before",
                Step {
                    lease: None,
                    first_seq: 2,
                    messages: &messages[..2],
                    usage: &[(3, first)],
                    changes: &[],
                    model_calls: 2,
                    view: None,
                },
            )
            .unwrap();
        store
            .commit(
                "before",
                Step {
                    lease: None,
                    first_seq: 4,
                    messages: &messages[2..],
                    usage: &[(5, second)],
                    changes: &[],
                    model_calls: 3,
                    view: None,
                },
            )
            .unwrap();
        let after = store.load("before").unwrap().unwrap();
        assert_eq!(after.history.len(), 6);
        assert_eq!(after.reply_usage.last(), Some(&(5, second)), "the last reply's, at its position");
        assert_eq!(
            after.usage,
            TokenUsage {
                input_tokens: 2_500,
                output_tokens: 37,
                cache_read_tokens: 1_000,
                cache_write_tokens: 250
            }
        );
        let recorded: Option<String> = store
            .connection()
            .query_row("SELECT usage FROM messages WHERE session_id = 'before' AND seq = 3", [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(
            recorded.as_deref(),
            Some(
                r#"{"input_tokens":1200,"output_tokens":30,"cache_read_tokens":1000,"cache_write_tokens":0}"#
            ),
            "on the reply's own row"
        );
    }

    #[test]
    fn commits_reach_the_database_file_without_a_commit_checkpointing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let store = SqliteStore::open(&path).unwrap();
        store.create("s1", &Holder::this_process(), "c0", i64::MAX).unwrap();
        let messages = [Message::user("hi")];
        store.commit("s1", crate::state::store_tests::step(None, 0, &messages)).unwrap();
        // Far below the fallback threshold, so only the background thread can have copied
        // the step out of the WAL. Read the database file alone (a copy, without its WAL).
        let copy = dir.path().join("copy.db");
        let checkpointed = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            std::fs::copy(&path, &copy).unwrap();
            let copy = Connection::open(&copy).unwrap();
            let count = copy.query_row("SELECT count(*) FROM messages", [], |row| row.get::<_, i64>(0));
            count.is_ok_and(|count| count == 1)
        });
        assert!(checkpointed, "the step never reached the database file");
    }
}
