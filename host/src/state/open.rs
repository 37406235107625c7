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
        "{given_as} is neither sqlite:PATH nor postgres://USER@HOST:PORT/DATABASE: {}",
        unlike_a_store(name)
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

/// What an error may say of a store name that is neither form: its scheme, or that it is a
/// `key=value` connection string. Never the rest, which may hold a password
/// (`host=db password=…`, `mysql://user:…@db`): the error goes to a terminal, a log, a CI
/// transcript.
fn unlike_a_store(name: &str) -> String {
    let withheld = "(the rest is not repeated: it may hold a password)";
    match name.split_once("://") {
        Some((scheme, _)) if is_scheme(scheme) => format!("it is a `{scheme}://` URL {withheld}"),
        _ if name.contains('=') => {
            format!("it reads as a key=value connection string, which is not taken here {withheld}")
        }
        _ => format!("it is neither form {withheld}"),
    }
}

/// A URL scheme as RFC 3986 spells one: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(name: &str) -> String {
        match open_named_store(name, None, "--to") {
            Ok(_) => panic!("`{name}` was taken"),
            Err(error) => format!("{error:#}"),
        }
    }

    #[test]
    fn a_name_of_neither_form_is_refused_without_repeating_it() {
        let said = refused("host=127.0.0.1 port=1 user=u password=hunter2 dbname=d");
        assert_eq!(
            said,
            "--to is neither sqlite:PATH nor postgres://USER@HOST:PORT/DATABASE: it reads as a key=value \
             connection string, which is not taken here (the rest is not repeated: it may hold a password)"
        );
        let said = refused("mysql://u:hunter2@127.0.0.1:1/d");
        assert!(
            said.ends_with("it is a `mysql://` URL (the rest is not repeated: it may hold a password)"),
            "{said}"
        );
        for name in ["hunter2", "sqlite/hunter2", "://hunter2", "1x://hunter2"] {
            let said = refused(name);
            assert!(!said.contains("hunter2"), "{said}");
            assert!(
                said.ends_with("it is neither form (the rest is not repeated: it may hold a password)"),
                "{said}"
            );
        }
    }
}
