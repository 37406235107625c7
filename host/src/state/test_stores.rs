//! The stores the state tests run against: a test body takes a [`TestDatabase`] and
//! [`both_stores!`] runs it on SQLite and on a real PostgreSQL alike.

use std::path::PathBuf;
use std::sync::Arc;

use super::postgres::test_server::{PASSWORD, TestServer};
use super::{PostgresStore, SessionStore, SqliteStore};

/// A database that stores are opened on, as many as a test wants (as processes would).
pub(crate) enum TestDatabase {
    Sqlite { _dir: tempfile::TempDir, path: PathBuf },
    Postgres { url: String },
}

impl TestDatabase {
    pub(crate) fn sqlite() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        Self::Sqlite { _dir: dir, path }
    }

    /// A fresh database on the test binary's PostgreSQL server.
    pub(crate) fn postgres() -> Self {
        Self::Postgres { url: TestServer::fresh_database() }
    }

    /// The PostgreSQL database's URL, for a test that opens it itself.
    pub(crate) fn url(&self) -> &str {
        match self {
            Self::Postgres { url } => url,
            Self::Sqlite { .. } => unreachable!("a PostgreSQL database"),
        }
    }

    /// A new store on the database.
    pub(crate) fn open(&self) -> Arc<dyn SessionStore> {
        match self {
            Self::Sqlite { path, .. } => Arc::new(SqliteStore::open(path).unwrap()),
            Self::Postgres { url } => Arc::new(PostgresStore::open(url, Some(PASSWORD)).unwrap()),
        }
    }

    /// Runs `sql` (literal values only: both dialects read it) behind the stores' back.
    pub(crate) fn execute(&self, sql: &str) {
        match self {
            Self::Sqlite { path, .. } => {
                rusqlite::Connection::open(path).unwrap().execute_batch(sql).unwrap();
            }
            Self::Postgres { url } => client(url).batch_execute(sql).unwrap(),
        }
    }

    /// A connection of the test's own to the PostgreSQL database (a transaction held open
    /// beside the store's, say).
    pub(crate) fn connect(&self) -> ::postgres::Client {
        match self {
            Self::Postgres { url } => client(url),
            Self::Sqlite { .. } => panic!("a connection of one's own is for PostgreSQL"),
        }
    }

    /// The one integer `sql` selects.
    pub(crate) fn query_i64(&self, sql: &str) -> i64 {
        match self {
            Self::Sqlite { path, .. } => {
                rusqlite::Connection::open(path).unwrap().query_row(sql, [], |row| row.get(0)).unwrap()
            }
            Self::Postgres { url } => client(url).query_one(sql, &[]).unwrap().get(0),
        }
    }
}

/// A connection of the test's own (tests run on plain threads, where the synchronous client
/// may run).
fn client(url: &str) -> ::postgres::Client {
    let mut config: ::postgres::Config = url.parse().unwrap();
    config.password(PASSWORD).connect(::postgres::NoTls).unwrap()
}

/// Runs each named test body (a `fn(&TestDatabase)` in the calling module) on both stores:
/// as `on_sqlite::NAME` and `on_postgres::NAME`.
macro_rules! both_stores {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(#[test]
            fn $name() {
                super::$name(&$crate::state::test_stores::TestDatabase::sqlite());
            })*
        }
        mod on_postgres {
            $(#[test]
            fn $name() {
                super::$name(&$crate::state::test_stores::TestDatabase::postgres());
            })*
        }
    };
}
pub(crate) use both_stores;
