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
