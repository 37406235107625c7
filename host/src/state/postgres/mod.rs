//! A [`SessionStore`] in PostgreSQL (`[storage] url`), for hosts on several machines that
//! share their sessions. The same rows, leases and refusals as the SQLite store: each method
//! is one transaction; a step checks its lease under a row lock, so a lease taken over
//! meanwhile fails the step.
//!
//! Built on the synchronous `postgres` client, like the trait: the connections live on
//! worker threads of their own ([`pool`] says why), the caller waits for the answer.

mod connection;
mod pool;
mod rows;
mod schema;
mod shared;
#[cfg(test)]
pub(crate) mod test_server;

use self::pool::Pool;
use self::rows::{OWNED_BY, session_entry, session_entry_select};
use super::StateChange;
use super::lease::{Fence, Holder, LeaseAnswer, Taken, now_millis};
use super::listing::SessionEntry;
use super::store::{SessionStore, Step, StoreError, StoredSession};
use crate::compacted_history::CompactedHistory;
use crate::conversation::{Message, Role};
use crate::events::TokenUsage;

/// Connections (and threads) a store keeps: enough for a host's sessions to write while one
/// lists, few enough that many hosts share one server.
const CONNECTIONS: usize = 4;

pub struct PostgresStore {
    pool: Pool,
    /// For connections of their own (following the sessions other hosts move).
    config: postgres::Config,
    /// The URL, for errors.
    name: String,
}

impl PostgresStore {
    /// Connects to the database at `url` (which holds no password: `password` is it), and
    /// brings its schema up to this binary's.
    pub fn open(url: &str, password: Option<&str>) -> Result<Self, StoreError> {
        let failed = |detail: String| StoreError::Open { path: url.to_owned(), detail };
        let mut config: postgres::Config =
            url.parse().map_err(|error: postgres::Error| failed(with_causes(&error)))?;
        if let Some(password) = password {
            config.password(password);
        }
        config.application_name("agent-host");
        config.connect_timeout(std::time::Duration::from_secs(10));
        let pool = Pool::start(config.clone(), url.to_owned(), CONNECTIONS)
            .map_err(|error| failed(error.to_string()))?;
        pool.run(schema::migrate)?;
        Ok(Self { pool, config, name: url.to_owned() })
    }
}

/// A [`Step`] the store's worker can own.
struct OwnedStep {
    /// The fence's holder token and generation.
    lease: Option<(String, u64)>,
    first_seq: usize,
    messages: Vec<Message>,
    usage: Vec<(usize, TokenUsage)>,
    changes: Vec<StateChange>,
    model_calls: u64,
    view: Option<OwnedView>,
}

/// A [`super::ViewChange`] the worker can own: generation, view, the summaries it adds.
type OwnedView = (u64, CompactedHistory, Vec<(u64, Message)>);

impl From<Step<'_>> for OwnedStep {
    fn from(step: Step<'_>) -> Self {
        Self {
            lease: step.lease.map(|fence| (fence.token.to_owned(), fence.generation)),
            first_seq: step.first_seq,
            messages: step.messages.to_vec(),
            usage: step.usage.to_vec(),
            changes: step.changes.to_vec(),
            model_calls: step.model_calls,
            view: step.view.map(|change| (change.generation, change.view.clone(), change.summaries.to_vec())),
        }
    }
}

impl SessionStore for PostgresStore {
    fn create(&self, id: &str, holder: &Holder, claim: &str, expires_at: i64) -> Result<Taken, StoreError> {
        let (id, holder, claim) = (id.to_owned(), holder.clone(), claim.to_owned());
        self.pool.run(move |connection| {
            let mut transaction = connection.transaction()?;
            let now = now_millis();
            transaction.execute(
                "INSERT INTO sessions (id, created_at, updated_at) VALUES ($1, $2, $2)",
                &[&id, &now],
            )?;
            let taken = rows::first_lease(
                rows::take_lease(&mut transaction, &id, &holder, &claim, expires_at, None)?,
                &id,
            )?;
            transaction.commit()?;
            Ok(taken)
        })
    }

    fn create_copy(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        contents: &StoredSession,
        last_used: Option<i64>,
    ) -> Result<Taken, StoreError> {
        let (id, holder, claim, contents) =
            (id.to_owned(), holder.clone(), claim.to_owned(), contents.clone());
        self.pool.run(move |connection| {
            let mut transaction = connection.transaction()?;
            let now = now_millis();
            transaction.execute(
                "INSERT INTO sessions (id, created_at, updated_at, model_calls) VALUES ($1, $2, $3, $4)",
                &[&id, &now, &last_used.unwrap_or(now), &(contents.model_calls as i64)],
            )?;
            let taken = rows::first_lease(
                rows::take_lease(&mut transaction, &id, &holder, &claim, expires_at, None)?,
                &id,
            )?;
            rows::insert_messages(&mut transaction, &id, 0, &contents.history, &contents.reply_usage)?;
            for (namespace, key, value) in &contents.state {
                transaction.execute(
                    "INSERT INTO state (session_id, namespace, key, value) VALUES ($1, $2, $3, $4)",
                    &[&id, namespace, key, value],
                )?;
            }
            let summaries: Vec<(u64, Message)> =
                contents.summaries.iter().map(|(number, message)| (*number, message.clone())).collect();
            rows::insert_summaries(&mut transaction, &id, &summaries)?;
            if let Some(stored) = &contents.view {
                rows::insert_view(&mut transaction, &id, stored.generation, &stored.view)?;
            }
            transaction.commit()?;
            Ok(taken)
        })
    }

    fn lease(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        replacing: Option<&str>,
    ) -> Result<LeaseAnswer, StoreError> {
        let (id, holder, claim) = (id.to_owned(), holder.clone(), claim.to_owned());
        let replacing = replacing.map(str::to_owned);
        self.pool.run(move |connection| {
            let mut transaction = connection.transaction()?;
            let taken =
                rows::take_lease(&mut transaction, &id, &holder, &claim, expires_at, replacing.as_deref())?;
            let answer = match taken {
                Some(taken) => LeaseAnswer::Taken(taken),
                None => {
                    LeaseAnswer::HeldBy(rows::held_lease(&mut transaction, &id, false)?.ok_or_else(|| {
                        StoreError::Unavailable(format!(
                            "session {id}'s lease was refused but no one holds it"
                        ))
                    })?)
                }
            };
            transaction.commit()?;
            Ok(answer)
        })
    }

    fn renew_leases(&self, token: &str, expires_at: i64) -> Result<(), StoreError> {
        let token = token.to_owned();
        self.pool.run(move |connection| {
            // The rows locked in the sessions' order, as a batch of events locks them
            // (`shared.rs`): two transactions that lock rows in one order never wait for each
            // other in a cycle. In the scan's order, a renewal and a relay's batch deadlocked.
            connection.execute(
                "UPDATE session_leases SET expires_at = $2 WHERE session_id IN (
                     SELECT session_id FROM session_leases WHERE token = $1 AND expires_at <> 0
                     ORDER BY session_id COLLATE \"C\" FOR UPDATE)
                 AND token = $1 AND expires_at <> 0",
                &[&token, &expires_at],
            )?;
            Ok(())
        })
    }

    fn release_lease(&self, id: &str, claim: &str) -> Result<(), StoreError> {
        let (id, claim) = (id.to_owned(), claim.to_owned());
        self.pool.run(move |connection| {
            connection.execute(
                "UPDATE session_leases SET expires_at = 0 WHERE session_id = $1 AND claim = $2",
                &[&id, &claim],
            )?;
            Ok(())
        })
    }

    fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |connection| {
            // One snapshot: a session another host is writing is read as of one step.
            let mut transaction = connection.snapshot()?;
            let Some(row) =
                transaction.query_opt("SELECT model_calls FROM sessions WHERE id = $1", &[&id])?
            else {
                return Ok(None);
            };
            let recorded_calls: i64 = row.get(0);
            let mut history = Vec::new();
            let mut usage = TokenUsage::default();
            let mut reply_usage = Vec::new();
            for row in transaction
                .query("SELECT seq, body, usage FROM messages WHERE session_id = $1 ORDER BY seq", &[&id])?
            {
                let seq: i64 = row.get(0);
                let corrupt = |detail: String| StoreError::Corrupt { session: id.clone(), seq, detail };
                let message: Message =
                    serde_json::from_str(row.get(1)).map_err(|error| corrupt(error.to_string()))?;
                if let Some(used) = row.get::<_, Option<&str>>(2) {
                    let used: TokenUsage =
                        serde_json::from_str(used).map_err(|error| corrupt(format!("its usage: {error}")))?;
                    usage = usage.plus(used);
                    reply_usage.push((history.len(), used));
                }
                history.push(message);
            }
            let state = transaction
                .query(
                    "SELECT namespace, key, value FROM state WHERE session_id = $1 ORDER BY namespace, key",
                    &[&id],
                )?
                .iter()
                .map(|row| (row.get(0), row.get(1), row.get(2)))
                .collect();
            let summaries = rows::load_summaries(&mut transaction, &id)?;
            let view = rows::load_view(&mut transaction, &id)?;
            transaction.commit()?;
            // As SQLite's: the replies in the history count the model calls that returned.
            let replies = history.iter().filter(|message| message.role == Role::Assistant).count() as u64;
            let model_calls = replies.max(recorded_calls as u64);
            Ok(Some(StoredSession { history, state, model_calls, usage, reply_usage, summaries, view }))
        })
    }

    fn commit(&self, id: &str, step: Step<'_>) -> Result<(), StoreError> {
        let (id, step) = (id.to_owned(), OwnedStep::from(step));
        self.pool.run(move |connection| {
            let mut transaction = connection.transaction()?;
            if let Some((token, generation)) = &step.lease {
                rows::check_lease(&mut transaction, &id, Fence { token, generation: *generation })?;
            }
            rows::insert_messages(&mut transaction, &id, step.first_seq, &step.messages, &step.usage)?;
            for change in &step.changes {
                match &change.value {
                    Some(value) => transaction.execute(
                        "INSERT INTO state (session_id, namespace, key, value) VALUES ($1, $2, $3, $4)
                         ON CONFLICT (session_id, namespace, key) DO UPDATE SET value = excluded.value",
                        &[&id, &change.namespace, &change.key, value],
                    )?,
                    None => transaction.execute(
                        "DELETE FROM state WHERE session_id = $1 AND namespace = $2 AND key = $3",
                        &[&id, &change.namespace, &change.key],
                    )?,
                };
            }
            if step.messages.iter().any(|message| message.role == Role::User) {
                transaction.execute(
                    "UPDATE sessions SET updated_at = $2, model_calls = $3 WHERE id = $1",
                    &[&id, &now_millis(), &(step.model_calls as i64)],
                )?;
            }
            if let Some((generation, view, summaries)) = &step.view {
                rows::insert_summaries(&mut transaction, &id, summaries)?;
                rows::insert_view(&mut transaction, &id, *generation, view)?;
            }
            Ok(transaction.commit()?)
        })
    }

    fn list(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        let limit = row_limit(limit);
        self.pool.run(move |connection| {
            let rows =
                connection.query("SELECT id FROM sessions ORDER BY updated_at DESC LIMIT $1", &[&limit])?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    fn entries(&self, limit: usize) -> Result<Vec<SessionEntry>, StoreError> {
        let limit = row_limit(limit);
        self.pool.run(move |connection| {
            let query = format!(
                "{} FROM sessions ORDER BY sessions.updated_at DESC LIMIT $1",
                session_entry_select("$2")
            );
            Ok(connection.query(&query, &[&limit, &now_millis()])?.iter().map(session_entry).collect())
        })
    }

    fn entries_owned(&self, owner: &str, limit: usize) -> Result<Vec<SessionEntry>, StoreError> {
        let (owner, limit) = (owner_value(owner), row_limit(limit));
        self.pool.run(move |connection| {
            let query = format!(
                "{} FROM state JOIN sessions ON sessions.id = state.session_id
                 WHERE {OWNED_BY} ORDER BY sessions.updated_at DESC LIMIT $2",
                session_entry_select("$3")
            );
            Ok(connection
                .query(&query, &[&owner, &limit, &now_millis()])?
                .iter()
                .map(session_entry)
                .collect())
        })
    }

    fn count_owned(&self, owner: &str) -> Result<usize, StoreError> {
        let owner = owner_value(owner);
        self.pool.run(move |connection| {
            let count: i64 = connection
                .query_one(&format!("SELECT COUNT(*) FROM state WHERE {OWNED_BY}"), &[&owner])?
                .get(0);
            Ok(count as usize)
        })
    }

    fn state_value(&self, id: &str, namespace: &str, key: &str) -> Result<Option<String>, StoreError> {
        let (id, namespace, key) = (id.to_owned(), namespace.to_owned(), key.to_owned());
        self.pool.run(move |connection| {
            let row = connection.query_opt(
                "SELECT value FROM state WHERE session_id = $1 AND namespace = $2 AND key = $3",
                &[&id, &namespace, &key],
            )?;
            Ok(row.map(|row| row.get(0)))
        })
    }

    fn shared(&self) -> Option<&dyn super::shared::SharedLog> {
        Some(self)
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |connection| {
            let mut transaction = connection.transaction()?;
            for table in [
                "messages",
                "state",
                "summaries",
                "views",
                "session_leases",
                "session_events",
                "session_event_views",
                "pending_asks",
            ] {
                transaction.execute(&format!("DELETE FROM {table} WHERE session_id = $1"), &[&id])?;
            }
            let deleted = transaction.execute("DELETE FROM sessions WHERE id = $1", &[&id])? == 1;
            transaction.commit()?;
            Ok(deleted)
        })
    }
}

/// A listing's `LIMIT`: PostgreSQL refuses a negative one, which `usize::MAX` would become.
fn row_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// An owner as its state value holds it: a JSON string.
fn owner_value(owner: &str) -> String {
    serde_json::Value::from(owner).to_string()
}

/// An error with what caused it: the client's own text is often only its kind
/// ("invalid configuration", "db error"), the reason is in its source.
pub(crate) fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let inner_text = inner.to_string();
        if !text.contains(&inner_text) {
            text = format!("{text}: {inner_text}");
        }
        cause = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::test_stores::TestDatabase;
    use test_server::PASSWORD;

    fn url(db: &TestDatabase) -> &str {
        match db {
            TestDatabase::Postgres { url } => url,
            TestDatabase::Sqlite { .. } => unreachable!("a PostgreSQL database"),
        }
    }

    #[test]
    fn the_schema_is_migrated_once_and_a_newer_one_is_refused() {
        let db = TestDatabase::postgres();
        drop(PostgresStore::open(url(&db), Some(PASSWORD)).unwrap());
        drop(PostgresStore::open(url(&db), Some(PASSWORD)).unwrap());
        let versions = db.query_i64("SELECT COUNT(*) FROM refinery_schema_history");
        assert_eq!(versions, schema::latest() as i64, "each migration recorded once");
        assert!(schema::latest() >= 3, "sessions, lease generations, the shared log");
        db.execute(&format!(
            "INSERT INTO refinery_schema_history (version, name, applied_on, checksum) VALUES ({}, 'future', '2027-01-01T00:00:00Z', '0')",
            schema::latest() + 1
        ));
        let error = PostgresStore::open(url(&db), Some(PASSWORD)).err().expect("refused");
        assert!(
            matches!(error, StoreError::SchemaNewer { found, known } if found == schema::latest() + 1 && known == schema::latest()),
            "{error:?}"
        );
        assert!(error.to_string().contains("newer than this agent-host knows"), "{error}");
    }

    #[test]
    fn a_database_the_first_release_made_is_adopted_and_migrated_with_its_sessions() {
        let db = TestDatabase::postgres();
        // As the first release left it: its one migration applied, counted in its own table.
        db.execute(include_str!("migrations/V1__sessions.sql"));
        db.execute(
            "CREATE TABLE agent_host_schema (version INTEGER NOT NULL);
             INSERT INTO agent_host_schema (version) VALUES (1);
             INSERT INTO sessions (id, created_at, updated_at) VALUES ('kept', 1, 1);",
        );
        let store = PostgresStore::open(url(&db), Some(PASSWORD)).unwrap();
        assert_eq!(store.list(10).unwrap(), ["kept"]);
        assert_eq!(db.query_i64("SELECT COUNT(*) FROM refinery_schema_history"), schema::latest() as i64);
        assert_eq!(db.query_i64("SELECT COUNT(*) FROM pg_tables WHERE tablename = 'agent_host_schema'"), 0);
        // The later migrations ran: the lease has its generation.
        let taken = store.lease("kept", &Holder::this_process(), "c", i64::MAX, None).unwrap();
        assert!(matches!(taken, LeaseAnswer::Taken(Taken { generation: 1, .. })), "{taken:?}");
    }

    #[test]
    fn a_wrong_or_missing_password_is_refused_at_open() {
        let db = TestDatabase::postgres();
        for password in [None, Some("wrong")] {
            let error = PostgresStore::open(url(&db), password).err().expect("refused");
            assert!(matches!(&error, StoreError::Open { path, .. } if path == url(&db)), "{error:?}");
            assert!(error.to_string().contains("password"), "{error}");
        }
    }

    #[test]
    fn a_database_that_cannot_be_reached_is_an_open_error_naming_it() {
        // A port nothing listens on: bound, then let go.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("postgres://nobody@127.0.0.1:{port}/none");
        let error = PostgresStore::open(&url, None).err().expect("refused");
        assert!(matches!(&error, StoreError::Open { path, .. } if path == &url), "{error:?}");
    }

    /// The synchronous client panics on a thread that runs a tokio runtime: the store is
    /// opened, used and dropped on one here, as the host does.
    #[tokio::test]
    async fn the_store_is_opened_used_and_dropped_from_async_code() {
        let db = TestDatabase::postgres();
        let store = PostgresStore::open(url(&db), Some(PASSWORD)).unwrap();
        store.create("s1", &Holder::this_process(), "c0", i64::MAX).unwrap();
        assert_eq!(store.list(10).unwrap(), ["s1"]);
        drop(store);
    }
}
