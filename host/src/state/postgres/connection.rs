//! One worker's connection and the statements it has prepared: each statement is parsed by
//! the server once per connection, not once per use, so a step costs a round trip per row
//! written rather than two.

use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::{Client, GenericClient, IsolationLevel, Row, Statement, Transaction};

/// A worker's connection, with its prepared statements by their text.
pub(super) struct Connection {
    client: Client,
    statements: HashMap<String, Statement>,
}

type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

/// `sql` prepared on `client`'s connection, from `statements` when it was before.
fn prepared<C: GenericClient>(
    client: &mut C,
    statements: &mut HashMap<String, Statement>,
    sql: &str,
) -> Result<Statement, postgres::Error> {
    if let Some(statement) = statements.get(sql) {
        return Ok(statement.clone());
    }
    let statement = client.prepare(sql)?;
    statements.insert(sql.to_owned(), statement.clone());
    Ok(statement)
}

impl Connection {
    pub(super) fn new(client: Client) -> Self {
        Self { client, statements: HashMap::new() }
    }

    pub(super) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// The connection itself, for what is run once (the migrations).
    pub(super) fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// A read-write transaction.
    pub(super) fn transaction(&mut self) -> Result<Work<'_>, postgres::Error> {
        Ok(Work { transaction: self.client.transaction()?, statements: &mut self.statements })
    }

    /// A read-only transaction that sees one snapshot throughout.
    pub(super) fn snapshot(&mut self) -> Result<Work<'_>, postgres::Error> {
        let transaction = self
            .client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        Ok(Work { transaction, statements: &mut self.statements })
    }

    /// One statement in a transaction of its own.
    pub(super) fn execute(&mut self, sql: &str, params: Params<'_>) -> Result<u64, postgres::Error> {
        let statement = prepared(&mut self.client, &mut self.statements, sql)?;
        self.client.execute(&statement, params)
    }

    pub(super) fn query(&mut self, sql: &str, params: Params<'_>) -> Result<Vec<Row>, postgres::Error> {
        let statement = prepared(&mut self.client, &mut self.statements, sql)?;
        self.client.query(&statement, params)
    }

    pub(super) fn query_one(&mut self, sql: &str, params: Params<'_>) -> Result<Row, postgres::Error> {
        let statement = prepared(&mut self.client, &mut self.statements, sql)?;
        self.client.query_one(&statement, params)
    }

    pub(super) fn query_opt(
        &mut self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Option<Row>, postgres::Error> {
        let statement = prepared(&mut self.client, &mut self.statements, sql)?;
        self.client.query_opt(&statement, params)
    }
}

/// A transaction on a [`Connection`], with its prepared statements. Dropped without
/// [`Work::commit`], it rolls back.
pub(super) struct Work<'a> {
    transaction: Transaction<'a>,
    statements: &'a mut HashMap<String, Statement>,
}

impl Work<'_> {
    pub(super) fn execute(&mut self, sql: &str, params: Params<'_>) -> Result<u64, postgres::Error> {
        let statement = prepared(&mut self.transaction, self.statements, sql)?;
        self.transaction.execute(&statement, params)
    }

    pub(super) fn query(&mut self, sql: &str, params: Params<'_>) -> Result<Vec<Row>, postgres::Error> {
        let statement = prepared(&mut self.transaction, self.statements, sql)?;
        self.transaction.query(&statement, params)
    }

    pub(super) fn query_opt(
        &mut self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Option<Row>, postgres::Error> {
        let statement = prepared(&mut self.transaction, self.statements, sql)?;
        self.transaction.query_opt(&statement, params)
    }

    pub(super) fn query_one(&mut self, sql: &str, params: Params<'_>) -> Result<Row, postgres::Error> {
        let statement = prepared(&mut self.transaction, self.statements, sql)?;
        self.transaction.query_one(&statement, params)
    }

    pub(super) fn commit(self) -> Result<(), postgres::Error> {
        self.transaction.commit()
    }
}
