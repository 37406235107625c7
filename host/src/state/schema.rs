//! The SQLite schema of [`super::SqliteStore`], and bringing a database made by an older
//! version up to it when it is opened.

use rusqlite::{Connection, params};

use super::sqlite::in_transaction;
use super::store::StoreError;

// `sessions.updated_at` and `model_calls` are written when a step carries a user message
// (a turn starts, or a stop hook continues it), not on every step: a row of its own would
// cost every step a third page in the WAL. `model_calls` is read back as the number of
// replies in the history, which is what it counts (see `load`).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id          TEXT PRIMARY KEY,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    model_calls INTEGER NOT NULL DEFAULT 0
);
-- `usage`: on a model reply, what its call used (JSON, see `TokenUsage`); on the reply's
-- own row, so recording it costs a step no page of its own.
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    body       TEXT NOT NULL,
    usage      TEXT,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state (
    session_id TEXT NOT NULL,
    namespace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (session_id, namespace, key)
) WITHOUT ROWID;
-- Which process may write a session, and until when (see `lease.rs`). A row stays once
-- its lease is let go (`expires_at` 0), so each taking's `generation` follows the last;
-- `took_over`: the last taking was from a holder that had not let go; `role`: what kind of
-- process the holder is (`HolderRole`), for the refusal of another.
CREATE TABLE IF NOT EXISTS session_leases (
    session_id    TEXT PRIMARY KEY,
    token         TEXT NOT NULL,
    claim         TEXT NOT NULL,
    pid           INTEGER NOT NULL,
    host          TEXT NOT NULL,
    pid_namespace TEXT NOT NULL,
    expires_at    INTEGER NOT NULL,
    generation    INTEGER NOT NULL DEFAULT 0,
    took_over     INTEGER NOT NULL DEFAULT 0,
    role          TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
-- What a compaction wrote in place of part of the history: summaries, numbered per session
-- from 1, and the views that send them (see `compacted_history::CompactedHistory`). A view names stored
-- messages by `seq` and summaries by `id`; the newest generation is the session's view.
-- Nothing here replaces a message: compaction changes what is sent, never what is kept.
-- Older databases gain both tables on open (CREATE ... IF NOT EXISTS).
CREATE TABLE IF NOT EXISTS summaries (
    session_id TEXT NOT NULL,
    id         INTEGER NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS views (
    session_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    covers     INTEGER NOT NULL,
    entries    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, generation)
) WITHOUT ROWID;
-- A session's owner under `serve` (`state::OWNER`): a partial index, so that listing and
-- counting one principal's sessions reads only hers, and no other state write touches it.
CREATE INDEX IF NOT EXISTS state_by_owner ON state (value, session_id)
    WHERE namespace = 'agent-host.serve' AND key = 'owner';
-- No index on updated_at: every step updates it, and keeping an index in step cost a page
-- write per commit; listing recent sessions scans instead (rare, and fast enough).
DROP INDEX IF EXISTS sessions_by_use;
";

/// Columns added to a table after databases with it were in use: (table, column, type).
/// `SCHEMA` creates new tables with them; an older database gets them when it is opened.
const ADDED_COLUMNS: &[(&str, &str, &str)] = &[
    ("messages", "usage", "TEXT"),
    ("session_leases", "generation", "INTEGER NOT NULL DEFAULT 0"),
    ("session_leases", "took_over", "INTEGER NOT NULL DEFAULT 0"),
    ("session_leases", "role", "TEXT NOT NULL DEFAULT ''"),
];

/// Brings an older database's tables up to [`ADDED_COLUMNS`], in one transaction, so that
/// two processes opening it at once cannot both add a column.
fn add_missing_columns(connection: &Connection) -> Result<(), StoreError> {
    in_transaction(connection, |transaction| {
        for (table, column, kind) in ADDED_COLUMNS {
            let present = transaction
                .prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2")?
                .exists(params![table, column])?;
            if !present {
                transaction.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
            }
        }
        Ok(())
    })
}

/// Creates what is missing of the schema: every table of a new database, the columns an
/// older one lacks.
pub(super) fn create_or_update(connection: &Connection) -> Result<(), StoreError> {
    connection.execute_batch(SCHEMA)?;
    add_missing_columns(connection)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(connection: &Connection, table: &str) -> Vec<String> {
        let mut statement = connection.prepare("SELECT name FROM pragma_table_info(?1)").unwrap();
        statement.query_map([table], |row| row.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
    }

    #[test]
    fn an_older_messages_table_gains_the_usage_column_and_keeps_its_rows() {
        let connection = Connection::open_in_memory().unwrap();
        // `messages` as the first released version created it.
        connection
            .execute_batch(
                "CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
                 PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
                 INSERT INTO messages VALUES ('s1', 0, '{\"role\":\"user\",\"content\":\"hi\"}');",
            )
            .unwrap();
        create_or_update(&connection).unwrap();
        assert_eq!(columns(&connection, "messages"), ["session_id", "seq", "body", "usage"]);
        let (body, usage): (String, Option<String>) = connection
            .query_row("SELECT body, usage FROM messages WHERE seq = 0", [], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .unwrap();
        assert_eq!((body.as_str(), usage), (r#"{"role":"user","content":"hi"}"#, None));
        // Opening it again changes nothing.
        create_or_update(&connection).unwrap();
        assert_eq!(columns(&connection, "messages").len(), 4);
    }

    #[test]
    fn an_older_database_gains_the_compaction_tables() {
        let connection = Connection::open_in_memory().unwrap();
        connection
            .execute_batch(
                "CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL,
                 updated_at INTEGER NOT NULL, model_calls INTEGER NOT NULL DEFAULT 0);",
            )
            .unwrap();
        assert!(columns(&connection, "views").is_empty());
        create_or_update(&connection).unwrap();
        assert_eq!(columns(&connection, "summaries"), ["session_id", "id", "body"]);
        assert_eq!(
            columns(&connection, "views"),
            ["session_id", "generation", "covers", "entries", "created_at"]
        );
    }
}
