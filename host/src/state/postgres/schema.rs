//! The PostgreSQL schema of [`super::PostgresStore`]: numbered migrations
//! (`migrations/NNNN_*.sql`), applied in order at open in one transaction, with the version
//! reached kept in `agent_host_schema`. A database a newer binary migrated is refused: this
//! one would not know what its tables mean.

use super::connection::Connection;

use crate::state::store::StoreError;

/// The migrations, in order: the schema's version is how many of them a database has.
/// Append only; a released migration never changes.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_sessions.sql"),
    include_str!("migrations/0002_lease_generations.sql"),
    include_str!("migrations/0003_shared_log.sql"),
];

/// Any number, the same in every process: the advisory lock that makes two hosts starting at
/// once migrate one after the other.
const MIGRATION_LOCK: i64 = 0x6167_656e_7468_6f73;

/// Brings the database up to [`MIGRATIONS`], or refuses one that is past it.
pub(super) fn migrate(connection: &mut Connection) -> Result<(), StoreError> {
    let mut transaction = connection.client().transaction()?;
    transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    transaction.batch_execute("CREATE TABLE IF NOT EXISTS agent_host_schema (version INTEGER NOT NULL)")?;
    let found: Option<i32> = transaction.query_one("SELECT MAX(version) FROM agent_host_schema", &[])?.get(0);
    let found = found.unwrap_or(0).max(0) as usize;
    if found > MIGRATIONS.len() {
        return Err(StoreError::SchemaNewer { found, known: MIGRATIONS.len() });
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(found) {
        transaction.batch_execute(migration)?;
        transaction.execute("INSERT INTO agent_host_schema (version) VALUES ($1)", &[&(index as i32 + 1)])?;
    }
    transaction.commit()?;
    Ok(())
}

/// The schema version this binary migrates to.
#[cfg(test)]
pub(super) fn latest() -> usize {
    MIGRATIONS.len()
}
