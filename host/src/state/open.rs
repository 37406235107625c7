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
    let password = password(storage.password_env.as_deref(), "[storage] password_env")?;
    Ok(Arc::new(PostgresStore::open(url, password.as_deref())?))
}

/// A store named on the command line: `sqlite:PATH`, or a PostgreSQL URL whose password is in
/// the variable `password_env` names (`given_as` is the option that named it, for errors).
pub fn open_named_store(
    name: &str,
    password_env: Option<&str>,
    given_as: &str,
) -> anyhow::Result<Arc<dyn SessionStore>> {
    if let Some(path) = name.strip_prefix("sqlite:") {
        anyhow::ensure!(password_env.is_none(), "{given_as}: a SQLite store takes no password");
        return Ok(Arc::new(SqliteStore::open(std::path::Path::new(path))?));
    }
    anyhow::ensure!(
        name.starts_with("postgres://") || name.starts_with("postgresql://"),
        "`{name}` is neither sqlite:PATH nor postgres://USER@HOST:PORT/DATABASE"
    );
    let parsed: postgres::Config =
        name.parse().with_context(|| "the PostgreSQL URL cannot be read".to_owned())?;
    anyhow::ensure!(
        parsed.get_password().is_none(),
        "the PostgreSQL URL holds a password, which every process list shows: remove it and name \
         the variable that holds it with {given_as}-password-env"
    );
    let password = password(password_env, &format!("{given_as}-password-env"))?;
    Ok(Arc::new(PostgresStore::open(name, password.as_deref())?))
}

/// The password in the variable `name`, if one is named.
fn password(name: Option<&str>, named_by: &str) -> anyhow::Result<Option<String>> {
    name.map(|name| {
        std::env::var(name).with_context(|| {
            format!("{named_by} names {name}, which is not set: export the database's password in it")
        })
    })
    .transpose()
}
