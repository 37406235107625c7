//! The store a config names: PostgreSQL at `[storage] url`, else SQLite at `path`.

use std::sync::Arc;

use anyhow::Context;

use super::{PostgresStore, SessionStore, SqliteStore};
use crate::config::Config;

/// Opens (creating or migrating as needed) the configured store.
pub fn open_store(config: &Config) -> anyhow::Result<Arc<dyn SessionStore>> {
    let storage = &config.storage;
    let Some(url) = &storage.url else {
        return Ok(Arc::new(SqliteStore::open(&config.resolve(&storage.path))?));
    };
    let password = match &storage.password_env {
        Some(name) => Some(std::env::var(name).with_context(|| {
            format!(
                "[storage] password_env names {name}, which is not set: export the database's password in it"
            )
        })?),
        None => None,
    };
    Ok(Arc::new(PostgresStore::open(url, password.as_deref())?))
}
