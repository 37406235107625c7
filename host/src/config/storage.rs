//! `[storage]`: where sessions are kept. SQLite at `path` unless `url` names a PostgreSQL
//! database; its password comes from the variable `password_env` names, never the file.

use super::load::is_variable_name;
use super::{Config, ConfigError};

/// The URL schemes that name a PostgreSQL database.
const SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

pub(super) fn check(config: &Config) -> Result<(), ConfigError> {
    let storage = &config.storage;
    let error = |field: &str, message: String| config.error_near(field, "storage", message);
    if let Some(name) = &storage.password_env {
        if !is_variable_name(name) {
            // The value is not repeated: a password pasted here by mistake must not reach a log.
            return Err(error(
                "storage.password_env",
                "must be the name of the environment variable that holds the database's password \
                 (letters, digits and `_`, such as AGENT_HOST_DB_PASSWORD), not the password itself"
                    .into(),
            ));
        }
        if storage.url.is_none() {
            return Err(error(
                "storage.password_env",
                "is the password of a PostgreSQL `url`, and none is set".into(),
            ));
        }
    }
    let Some(url) = &storage.url else { return Ok(()) };
    if !SCHEMES.iter().any(|scheme| url.starts_with(scheme)) {
        return Err(error(
            "storage.url",
            "must be a PostgreSQL URL, postgres://USER@HOST:PORT/DATABASE (SQLite is `path`)".into(),
        ));
    }
    let parsed: postgres::Config = url
        .parse()
        .map_err(|parse: postgres::Error| error("storage.url", format!("cannot be read: {parse}")))?;
    if parsed.get_password().is_some() {
        return Err(error(
            "storage.url",
            "holds a password: a config file is no place for one. Remove it from the URL and name \
             the environment variable that holds it in `password_env`"
                .into(),
        ));
    }
    if parsed.get_user().is_none() {
        return Err(error("storage.url", "names no user: postgres://USER@HOST:PORT/DATABASE".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::load::parse;

    fn error(text: &str) -> String {
        parse(text, Path::new("/tmp/agent-host-test/config.toml")).unwrap_err().to_string()
    }

    #[test]
    fn a_postgres_url_is_read_and_sqlite_stays_the_default() {
        let config = parse("", Path::new("/tmp/c.toml")).unwrap();
        assert_eq!(config.storage.url, None);
        let text =
            "[storage]\nurl = \"postgres://agent@db.internal:5433/sessions\"\npassword_env = \"DB_PASS\"\n";
        let config = parse(text, Path::new("/tmp/c.toml")).unwrap();
        assert_eq!(config.storage.url.as_deref(), Some("postgres://agent@db.internal:5433/sessions"));
        assert_eq!(config.storage.password_env.as_deref(), Some("DB_PASS"));
    }

    #[test]
    fn a_url_with_a_password_is_refused_naming_the_field_and_password_env() {
        let message = error("[storage]\n\nurl = \"postgres://agent:hunter2@db:5432/sessions\"\n");
        assert!(
            message.starts_with("/tmp/agent-host-test/config.toml:3: `storage.url`: holds a password"),
            "{message}"
        );
        assert!(message.contains("`password_env`"), "{message}");
        assert!(!message.contains("hunter2"), "the password is not repeated: {message}");
        let message = error("[storage]\nurl = \"postgresql://agent@db/sessions?password=hunter2\"\n");
        assert!(message.contains(":2: `storage.url`: holds a password"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }

    #[test]
    fn a_bad_url_or_password_variable_names_its_line_and_field() {
        let message = error("[storage]\nurl = \"mysql://agent@db/sessions\"\n");
        assert!(
            message
                .starts_with("/tmp/agent-host-test/config.toml:2: `storage.url`: must be a PostgreSQL URL"),
            "{message}"
        );
        let message = error("[storage]\nurl = \"postgres://db/sessions\"\n");
        assert!(message.contains(":2: `storage.url`: names no user"), "{message}");
        let message = error("[storage]\nurl = \"postgres://a@db/s\"\npassword_env = \"s3cret!\"\n");
        assert!(message.contains(":3: `storage.password_env`: must be the name"), "{message}");
        assert!(!message.contains("s3cret!"), "{message}");
        let message = error("[storage]\npassword_env = \"DB_PASS\"\n");
        assert!(
            message.contains(":2: `storage.password_env`: is the password of a PostgreSQL `url`"),
            "{message}"
        );
    }
}
