//! Statements on a pooled client or one of its transactions, each prepared once per
//! connection (deadpool's statement cache) rather than parsed by the server at every use: a
//! use is then one round trip.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

pub(super) type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

pub(super) async fn execute(
    on: &impl GenericClient,
    sql: &str,
    params: Params<'_>,
) -> Result<u64, tokio_postgres::Error> {
    let statement = on.prepare_cached(sql).await?;
    on.execute(&statement, params).await
}

pub(super) async fn query(
    on: &impl GenericClient,
    sql: &str,
    params: Params<'_>,
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let statement = on.prepare_cached(sql).await?;
    on.query(&statement, params).await
}

pub(super) async fn query_one(
    on: &impl GenericClient,
    sql: &str,
    params: Params<'_>,
) -> Result<Row, tokio_postgres::Error> {
    let statement = on.prepare_cached(sql).await?;
    on.query_one(&statement, params).await
}

pub(super) async fn query_opt(
    on: &impl GenericClient,
    sql: &str,
    params: Params<'_>,
) -> Result<Option<Row>, tokio_postgres::Error> {
    let statement = on.prepare_cached(sql).await?;
    on.query_opt(&statement, params).await
}
