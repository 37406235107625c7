//! The PostgreSQL schema of [`super::PostgresStore`]: refinery's migrations
//! (`migrations/V{N}__{name}.sql`), applied at open in one transaction, under an advisory
//! lock so that hosts starting at once migrate one after the other. A database a newer binary
//! migrated is refused: this one would not know what its tables mean.

use tokio_postgres::Client;

use crate::state::store::StoreError;

mod embedded {
    refinery::embed_migrations!("src/state/postgres/migrations");
}

/// Any number, the same in every process: the advisory lock the migrations run under.
const MIGRATION_LOCK: i64 = 0x6167_656e_7468_6f73;

/// Brings the database up to this binary's migrations, or refuses one that is past them.
pub(super) async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    client.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK]).await?;
    let migrated = migrate_locked(client).await;
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]).await;
    migrated?;
    unlocked?;
    Ok(())
}

async fn migrate_locked(client: &mut Client) -> Result<(), StoreError> {
    adopt_the_first_schema_table(client).await?;
    let runner = embedded::migrations::runner();
    let known = latest();
    // Read here rather than through refinery, which cannot read a row it did not write.
    let found = if table_exists(client, "refinery_schema_history").await? {
        let found: Option<i32> =
            client.query_one("SELECT MAX(version) FROM refinery_schema_history", &[]).await?.get(0);
        found.unwrap_or(0)
    } else {
        0
    };
    if found as usize > known {
        return Err(StoreError::SchemaNewer { found: found as usize, known });
    }
    runner.set_grouped(true).set_abort_divergent(true).run_async(client).await.map_err(failed)?;
    Ok(())
}

/// Databases made before refinery kept their version in `agent_host_schema`: the migrations
/// that table counts are marked applied (they are the same files), and the table goes.
async fn adopt_the_first_schema_table(client: &mut Client) -> Result<(), StoreError> {
    if !table_exists(client, "agent_host_schema").await? {
        return Ok(());
    }
    let found: Option<i32> =
        client.query_one("SELECT MAX(version) FROM agent_host_schema", &[]).await?.get(0);
    if let Some(found) = found.filter(|found| *found > 0) {
        embedded::migrations::runner()
            .set_target(refinery::Target::FakeVersion(found))
            .run_async(client)
            .await
            .map_err(failed)?;
    }
    client.batch_execute("DROP TABLE agent_host_schema").await?;
    Ok(())
}

async fn table_exists(client: &Client, table: &str) -> Result<bool, StoreError> {
    Ok(client.query_one("SELECT to_regclass($1) IS NOT NULL", &[&table]).await?.get(0))
}

fn failed(error: refinery::Error) -> StoreError {
    StoreError::Migration(super::with_causes(&error))
}

/// The schema version this binary migrates to: its newest migration's.
pub(super) fn latest() -> usize {
    embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|migration| migration.version())
        .max()
        .unwrap_or(0) as usize
}

#[cfg(test)]
mod tests {
    use super::latest;
    use crate::conversation::Message;
    use crate::state::lease::{Holder, LeaseAnswer, Taken};
    use crate::state::postgres::PostgresStore;
    use crate::state::postgres::test_server::PASSWORD;
    use crate::state::store::{SessionStore, StoreError};
    use crate::state::store_tests::{fence, step};
    use crate::state::test_stores::TestDatabase;

    #[test]
    fn the_schema_is_migrated_once_and_a_newer_one_is_refused() {
        let db = TestDatabase::postgres();
        drop(PostgresStore::open(db.url(), Some(PASSWORD)).unwrap());
        drop(PostgresStore::open(db.url(), Some(PASSWORD)).unwrap());
        let versions = db.query_i64("SELECT COUNT(*) FROM refinery_schema_history");
        assert_eq!(versions, latest() as i64, "each migration recorded once");
        assert!(latest() >= 3, "sessions, lease generations, the shared log");
        db.execute(&format!(
            "INSERT INTO refinery_schema_history (version, name, applied_on, checksum) VALUES ({}, 'future', '2027-01-01T00:00:00Z', '0')",
            latest() + 1
        ));
        let error = PostgresStore::open(db.url(), Some(PASSWORD)).err().expect("refused");
        assert!(
            matches!(error, StoreError::SchemaNewer { found, known } if found == latest() + 1 && known == latest()),
            "{error:?}"
        );
        assert!(error.to_string().contains("newer than this agent-host knows"), "{error}");
    }

    /// The migrations' files, applied by hand to leave a database as an older release did.
    const MIGRATIONS: [&str; 10] = [
        include_str!("migrations/V1__sessions.sql"),
        include_str!("migrations/V2__lease_generations.sql"),
        include_str!("migrations/V3__shared_log.sql"),
        include_str!("migrations/V4__lease_roles.sql"),
        include_str!("migrations/V5__commit_step.sql"),
        include_str!("migrations/V6__append_events.sql"),
        include_str!("migrations/V7__events_say_their_number.sql"),
        include_str!("migrations/V8__sessions_per_owner.sql"),
        include_str!("migrations/V9__leases_fenced_by_lock.sql"),
        include_str!("migrations/V10__owners_of_their_own.sql"),
    ];

    /// `db` as a release at migration `version` left it: its version in the first schema
    /// table (which a newer binary adopts), then `rows`.
    fn left_at(db: &TestDatabase, version: usize, rows: &str) {
        for migration in &MIGRATIONS[..version] {
            db.execute(migration);
        }
        db.execute(&format!(
            "CREATE TABLE agent_host_schema (version INTEGER NOT NULL);
             INSERT INTO agent_host_schema (version) VALUES ({version});
             {rows}"
        ));
    }

    #[test]
    fn a_database_the_first_release_made_is_adopted_and_migrated_with_its_sessions() {
        let db = TestDatabase::postgres();
        // As the first release left it: its one migration applied, counted in its own table.
        left_at(&db, 1, "INSERT INTO sessions (id, created_at, updated_at) VALUES ('kept', 1, 1);");
        let store = PostgresStore::open(db.url(), Some(PASSWORD)).unwrap();
        assert_eq!(store.list(10).unwrap(), ["kept"]);
        assert_eq!(db.query_i64("SELECT COUNT(*) FROM refinery_schema_history"), latest() as i64);
        assert_eq!(db.query_i64("SELECT COUNT(*) FROM pg_tables WHERE tablename = 'agent_host_schema'"), 0);
        // The later migrations ran: the lease has its generation.
        let taken = store.lease("kept", &Holder::this_process(), "c", i64::MAX, None).unwrap();
        assert!(matches!(taken, LeaseAnswer::Taken(Taken { generation: 1, .. })), "{taken:?}");
    }

    /// A database whose owners' sessions were counted row by row (before the eighth
    /// migration) has the counts made from its rows, and kept from then on.
    #[test]
    fn the_sessions_owners_had_before_their_counts_were_kept_are_counted_and_listed() {
        let db = TestDatabase::postgres();
        left_at(
            &db,
            7,
            "INSERT INTO sessions (id, created_at, updated_at) VALUES ('a1', 1, 1), ('a2', 1, 1), ('b1', 1, 1);
             INSERT INTO state (session_id, namespace, key, value) VALUES
                 ('a1', 'agent-host.serve', 'owner', '\"alice\"'),
                 ('a2', 'agent-host.serve', 'owner', '\"alice\"'),
                 ('b1', 'agent-host.serve', 'owner', '\"bob\"'),
                 ('b1', 'notes', 'owner', '\"alice\"');",
        );
        let store = PostgresStore::open(db.url(), Some(PASSWORD)).unwrap();
        assert_eq!((store.count_owned("alice", 10).unwrap(), store.count_owned("bob", 10).unwrap()), (2, 1));
        // Listed from the owners' own table (migration 10), filled from the same rows.
        let listed = |owner: &str| {
            let mut ids: Vec<String> =
                store.entries_owned(owner, 10).unwrap().into_iter().map(|entry| entry.id).collect();
            ids.sort();
            ids
        };
        assert_eq!(
            (listed("alice"), listed("bob")),
            (vec!["a1".to_owned(), "a2".to_owned()], vec!["b1".to_owned()])
        );
        assert!(store.delete("a1").unwrap());
        assert_eq!(store.count_owned("alice", 10).unwrap(), 1);
        assert_eq!(listed("alice"), ["a2"]);
    }

    /// A database the previous release left (at the fourth migration, sessions in it) is
    /// migrated to this one's, and a step is then committed by the one statement the fifth
    /// migration made, its lease checked.
    #[test]
    fn a_database_of_the_previous_schema_is_migrated_and_takes_a_step_in_one_statement() {
        let db = TestDatabase::postgres();
        left_at(&db, 4, "INSERT INTO sessions (id, created_at, updated_at) VALUES ('kept', 1, 1);");
        let store = PostgresStore::open(db.url(), Some(PASSWORD)).unwrap();
        assert_eq!(db.query_i64("SELECT MAX(version)::BIGINT FROM refinery_schema_history"), latest() as i64);
        let holder = Holder::this_process();
        let LeaseAnswer::Taken(taken) = store.lease("kept", &holder, "c", i64::MAX, None).unwrap() else {
            panic!("nobody held it")
        };
        let messages = [Message::user("after the migration")];
        store.commit("kept", step(fence(&holder, taken.generation), 0, &messages)).unwrap();
        assert_eq!(store.load("kept").unwrap().unwrap().history, messages);
    }

    /// A log written event by event (before the eleventh migration) is read with the same
    /// numbers after it, and a host of the earlier release, still running, reads, appends to
    /// and deletes it with its own statements.
    #[test]
    fn events_logged_one_row_each_are_read_after_the_migration_and_by_the_earlier_release() {
        let db = TestDatabase::postgres();
        left_at(
            &db,
            10,
            "INSERT INTO session_events (session_id, seq, kind, body) VALUES
                 ('s1', 4, 'a', '{\"n\":4}'), ('s1', 5, 'b', '{\"n\":5}'), ('s2', 1, 'a', '{}');",
        );
        let store = PostgresStore::open(db.url(), Some(PASSWORD)).unwrap();
        let log = store.shared().unwrap();
        let page = log.events_after("s1", 0, 10).unwrap();
        let read: Vec<(u64, String, String)> =
            page.events.into_iter().map(|event| (event.seq, event.kind, event.json)).collect();
        assert_eq!(
            (page.oldest_kept, read),
            (
                Some(4),
                vec![
                    (4, "a".to_owned(), "{\"n\":4}".to_owned()),
                    (5, "b".to_owned(), "{\"n\":5}".to_owned())
                ]
            )
        );
        assert_eq!(log.last_event("s1").unwrap(), 5);
        // The earlier release's own statements: its append, its reads, its deletion.
        let prior = db.query_i64(
            "SELECT agent_host_append_events('s1', NULL, NULL, ARRAY['c', 'd'], ARRAY['{}', '[]'], NULL, 100, 'unheard')",
        );
        assert_eq!((prior, log.last_event("s1").unwrap()), (5, 7));
        assert_eq!(db.query_i64("SELECT MAX(seq) FROM session_events WHERE session_id = 's1'"), 7);
        assert_eq!(
            db.query_i64("SELECT COUNT(*) FROM session_events WHERE session_id = 's1' AND seq > 5"),
            2
        );
        db.execute("DELETE FROM session_events WHERE session_id = 's1'");
        assert_eq!(log.last_event("s1").unwrap(), 0);
        assert_eq!(log.last_event("s2").unwrap(), 1, "another session's log untouched");
    }
}
