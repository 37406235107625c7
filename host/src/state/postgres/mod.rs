//! A [`SessionStore`] in PostgreSQL (`[storage] url`), for hosts on several machines that
//! share their sessions. The same rows, leases and refusals as the SQLite store: each method
//! is one transaction; a step checks its lease under a row lock, so a lease taken over
//! meanwhile fails the step.
//!
//! Asynchronous underneath: every method is an `async fn` on a pooled `tokio-postgres` client
//! ([`pool`] says where the connections live and why). What a turn does on its hot path has
//! an asynchronous twin in the trait ([`SessionStore::commit_async`]), which the turn awaits:
//! a step costs one round trip ([`step`]), during which the runtime's worker runs other
//! sessions. Every other
//! method, and the synchronous `commit`, waits for the same future on its caller's thread
//! ([`crate::state::wait`]), as the synchronous client did.

mod connection;
mod pool;
mod rows;
mod schema;
mod shared;
mod step;
#[cfg(test)]
pub(crate) mod test_server;

use tokio_postgres::IsolationLevel;

use self::connection::{execute, query, query_opt};
use self::pool::Pool;
use self::rows::{session_entry, session_entry_select};
use super::lease::{Holder, LeaseAnswer, Taken, now_millis};
use super::listing::SessionEntry;
use super::store::{SessionStore, Step, StoreError, StoreFuture, StoredSession};
use super::wait::wait;
use crate::conversation::{Message, Role};
use crate::events::TokenUsage;

/// Connections a store keeps: enough for a host's sessions to write while one lists, few
/// enough that many hosts share one server.
const CONNECTIONS: usize = 4;

pub struct PostgresStore {
    pool: Pool,
    /// For the connection of its own that follows the sessions other hosts move.
    config: postgres::Config,
    /// The URL, for errors.
    name: String,
}

impl PostgresStore {
    /// Connects to the database at `url` (which holds no password: `password` is it), and
    /// brings its schema up to this binary's.
    pub fn open(url: &str, password: Option<&str>) -> Result<Self, StoreError> {
        let failed = |detail: String| StoreError::Open { path: url.to_owned(), detail };
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|error: tokio_postgres::Error| failed(with_causes(&error)))?;
        if let Some(password) = password {
            config.password(password);
        }
        config.application_name("agent-host");
        config.connect_timeout(std::time::Duration::from_secs(10));
        let pool =
            Pool::start(config.clone(), url, CONNECTIONS).map_err(|error| failed(error.to_string()))?;
        wait(async {
            let mut client = pool.get().await?;
            schema::migrate(&mut client).await
        })?;
        Ok(Self { pool, config: postgres::Config::from(config), name: url.to_owned() })
    }

    async fn create_session(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
    ) -> Result<Taken, StoreError> {
        let client = self.pool.get().await?;
        rows::first_lease(rows::create_with_lease(&client, id, holder, claim, expires_at).await?, id)
    }

    async fn copy_session(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        contents: &StoredSession,
        last_used: Option<i64>,
    ) -> Result<Taken, StoreError> {
        let mut client = self.pool.get().await?;
        let transaction = client.transaction().await?;
        let now = now_millis();
        execute(
            &transaction,
            "INSERT INTO sessions (id, created_at, updated_at, model_calls) VALUES ($1, $2, $3, $4)",
            &[&id, &now, &last_used.unwrap_or(now), &(contents.model_calls as i64)],
        )
        .await?;
        let taken = rows::first_lease(
            rows::take_lease(&transaction, id, holder, claim, expires_at, None).await?,
            id,
        )?;
        rows::insert_messages(&transaction, id, 0, &contents.history, &contents.reply_usage).await?;
        for (namespace, key, value) in &contents.state {
            execute(
                &transaction,
                "INSERT INTO state (session_id, namespace, key, value) VALUES ($1, $2, $3, $4)",
                &[&id, namespace, key, value],
            )
            .await?;
        }
        let summaries: Vec<(u64, Message)> =
            contents.summaries.iter().map(|(number, message)| (*number, message.clone())).collect();
        rows::insert_summaries(&transaction, id, &summaries).await?;
        if let Some(stored) = &contents.view {
            rows::insert_view(&transaction, id, stored.generation, &stored.view).await?;
        }
        transaction.commit().await?;
        Ok(taken)
    }

    async fn take_lease(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        replacing: Option<&str>,
    ) -> Result<LeaseAnswer, StoreError> {
        let mut client = self.pool.get().await?;
        let transaction = client.transaction().await?;
        let taken = rows::take_lease(&transaction, id, holder, claim, expires_at, replacing).await?;
        let answer = match taken {
            Some(taken) => LeaseAnswer::Taken(taken),
            None => {
                LeaseAnswer::HeldBy(rows::held_lease(&transaction, id, false).await?.ok_or_else(|| {
                    StoreError::Unavailable(format!("session {id}'s lease was refused but no one holds it"))
                })?)
            }
        };
        transaction.commit().await?;
        Ok(answer)
    }

    async fn load_session(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        let mut client = self.pool.get().await?;
        // One snapshot: a session another host is writing is read as of one step. Its reads
        // are sent together (pipelined) and answered in order: one round trip, not five.
        let transaction = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let session = async {
            Ok::<_, StoreError>(
                query_opt(&transaction, "SELECT model_calls FROM sessions WHERE id = $1", &[&id]).await?,
            )
        };
        let messages = async {
            Ok(query(
                &transaction,
                "SELECT seq, body, usage FROM messages WHERE session_id = $1 ORDER BY seq",
                &[&id],
            )
            .await?)
        };
        let state = async {
            Ok(query(
                &transaction,
                "SELECT namespace, key, value FROM state WHERE session_id = $1 ORDER BY namespace, key",
                &[&id],
            )
            .await?)
        };
        let (session, messages, state, summaries, view) = futures_util::try_join!(
            session,
            messages,
            state,
            rows::load_summaries(&transaction, id),
            rows::load_view(&transaction, id)
        )?;
        transaction.commit().await?;
        let Some(session) = session else { return Ok(None) };
        let recorded_calls: i64 = session.get(0);
        let mut history = Vec::with_capacity(messages.len());
        let mut usage = TokenUsage::default();
        let mut reply_usage = Vec::new();
        for row in messages {
            let seq: i64 = row.get(0);
            let corrupt = |detail: String| StoreError::Corrupt { session: id.to_owned(), seq, detail };
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
        let state = state.iter().map(|row| (row.get(0), row.get(1), row.get(2))).collect();
        // As SQLite's: the replies in the history count the model calls that returned.
        let replies = history.iter().filter(|message| message.role == Role::Assistant).count() as u64;
        let model_calls = replies.max(recorded_calls as u64);
        Ok(Some(StoredSession { history, state, model_calls, usage, reply_usage, summaries, view }))
    }

    /// A step in one round trip: one statement ([`step`]).
    async fn commit_step(&self, id: &str, step: Step<'_>) -> Result<(), StoreError> {
        let prepared = step::Prepared::new(id, &step);
        self.pool
            .run(|clients| async move {
                let client = clients.get().await?;
                step::commit(&client, &prepared).await
            })
            .await
    }

    async fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        let mut client = self.pool.get().await?;
        let transaction = client.transaction().await?;
        // The lease first: its deletion waits for the steps in flight under it (and they,
        // after it, find no lease), so no step writes rows behind the deletion.
        for table in [
            "session_leases",
            "messages",
            "state",
            "summaries",
            "views",
            "session_event_batches",
            "session_event_views",
            "pending_asks",
        ] {
            execute(&transaction, &format!("DELETE FROM {table} WHERE session_id = $1"), &[&id]).await?;
        }
        let deleted = execute(&transaction, "DELETE FROM sessions WHERE id = $1", &[&id]).await? == 1;
        transaction.commit().await?;
        Ok(deleted)
    }
}

impl SessionStore for PostgresStore {
    fn create(&self, id: &str, holder: &Holder, claim: &str, expires_at: i64) -> Result<Taken, StoreError> {
        wait(self.create_session(id, holder, claim, expires_at))
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
        wait(self.copy_session(id, holder, claim, expires_at, contents, last_used))
    }

    fn lease(
        &self,
        id: &str,
        holder: &Holder,
        claim: &str,
        expires_at: i64,
        replacing: Option<&str>,
    ) -> Result<LeaseAnswer, StoreError> {
        wait(self.take_lease(id, holder, claim, expires_at, replacing))
    }

    fn renew_leases(&self, token: &str, expires_at: i64) -> Result<(), StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            // The rows locked in one order, the sessions', so that two renewals never wait
            // for each other in a cycle. A renewal fences nobody out, so it takes none of the
            // lock steps and batches check the lease under (migration 9's trigger).
            execute(
                &client,
                "UPDATE session_leases SET expires_at = $2 WHERE session_id IN (
                     SELECT session_id FROM session_leases WHERE token = $1 AND expires_at <> 0
                     ORDER BY session_id FOR UPDATE)
                 AND token = $1 AND expires_at <> 0",
                &[&token, &expires_at],
            )
            .await?;
            Ok(())
        })
    }

    fn release_lease(&self, id: &str, claim: &str) -> Result<(), StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            execute(
                &client,
                "UPDATE session_leases SET expires_at = 0 WHERE session_id = $1 AND claim = $2",
                &[&id, &claim],
            )
            .await?;
            Ok(())
        })
    }

    fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        wait(self.load_session(id))
    }

    fn commit(&self, id: &str, step: Step<'_>) -> Result<(), StoreError> {
        wait(self.commit_step(id, step))
    }

    fn commit_async<'a>(&'a self, id: &'a str, step: Step<'a>) -> StoreFuture<'a, ()> {
        Box::pin(self.commit_step(id, step))
    }

    fn list(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            let rows = query(
                &client,
                "SELECT id FROM sessions ORDER BY updated_at DESC LIMIT $1",
                &[&row_limit(limit)],
            )
            .await?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    fn entries(&self, limit: usize) -> Result<Vec<SessionEntry>, StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            let sql = format!(
                "{} FROM sessions ORDER BY sessions.updated_at DESC LIMIT $1",
                session_entry_select("$2")
            );
            Ok(query(&client, &sql, &[&row_limit(limit), &now_millis()])
                .await?
                .iter()
                .map(session_entry)
                .collect())
        })
    }

    fn entries_owned(&self, owner: &str, limit: usize) -> Result<Vec<SessionEntry>, StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            let sql = format!(
                // The owners' own table (`migrations/V10__owners_of_their_own.sql`), kept
                // from the owner rows by triggers.
                "{} FROM session_owners JOIN sessions ON sessions.id = session_owners.session_id
                 WHERE session_owners.owner = $1 ORDER BY sessions.updated_at DESC LIMIT $2",
                session_entry_select("$3")
            );
            Ok(query(&client, &sql, &[&owner_value(owner), &row_limit(limit), &now_millis()])
                .await?
                .iter()
                .map(session_entry)
                .collect())
        })
    }

    fn count_owned(&self, owner: &str, up_to: usize) -> Result<usize, StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            // Kept by triggers on the owner rows (`migrations/V8__sessions_per_owner.sql`).
            let row = query_opt(
                &client,
                "SELECT sessions FROM sessions_per_owner WHERE owner = $1",
                &[&owner_value(owner)],
            )
            .await?;
            let count = row.map_or(0, |row| row.get::<_, i64>(0));
            Ok(usize::try_from(count).unwrap_or(0).min(up_to))
        })
    }

    fn state_value(&self, id: &str, namespace: &str, key: &str) -> Result<Option<String>, StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            let row = query_opt(
                &client,
                "SELECT value FROM state WHERE session_id = $1 AND namespace = $2 AND key = $3",
                &[&id, &namespace, &key],
            )
            .await?;
            Ok(row.map(|row| row.get(0)))
        })
    }

    fn shared(&self) -> Option<&dyn super::shared::SharedLog> {
        Some(self)
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        wait(self.delete_session(id))
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

    #[test]
    fn a_wrong_or_missing_password_is_refused_at_open() {
        let db = TestDatabase::postgres();
        for password in [None, Some("wrong")] {
            let error = PostgresStore::open(db.url(), password).err().expect("refused");
            assert!(matches!(&error, StoreError::Open { path, .. } if path == db.url()), "{error:?}");
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

    /// Opened, used and dropped on a thread that runs a tokio runtime, as the host does.
    #[tokio::test]
    async fn the_store_is_opened_used_and_dropped_from_async_code() {
        let db = TestDatabase::postgres();
        let store = PostgresStore::open(db.url(), Some(PASSWORD)).unwrap();
        store.create("s1", &Holder::this_process(), "c0", i64::MAX).unwrap();
        assert_eq!(store.list(10).unwrap(), ["s1"]);
        drop(store);
    }

    /// As a host at concurrency: many sessions' turns on a runtime of two workers await their
    /// steps while others call a synchronous method (creating a session) on those same
    /// workers, more callers than the pool has connections. Every call finishes: no client
    /// is held by a task that a blocked worker would have to poll. (Before the awaited step
    /// ran on the store's thread, this hung within the first few sessions.)
    #[test]
    fn awaited_steps_and_blocking_calls_on_the_same_two_workers_all_finish() {
        let db = TestDatabase::postgres();
        let store = std::sync::Arc::new(PostgresStore::open(db.url(), Some(PASSWORD)).unwrap());
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let sessions = 40;
        let steps = 5;
        std::thread::spawn(move || {
            runtime.block_on(async {
                let tasks: Vec<_> = (0..sessions)
                    .map(|n| {
                        let store = store.clone();
                        tokio::spawn(async move {
                            let holder = Holder::this_process();
                            let id = format!("s{n}");
                            let taken = store.create(&id, &holder, "c", i64::MAX).unwrap();
                            for seq in 0..steps {
                                let messages = [Message::user(format!("{n}/{seq}"))];
                                let fence = crate::state::lease::Fence {
                                    token: &holder.token,
                                    generation: taken.generation,
                                };
                                let step = Step {
                                    lease: Some(fence),
                                    first_seq: seq,
                                    messages: &messages,
                                    usage: &[],
                                    changes: &[],
                                    model_calls: seq as u64,
                                    view: None,
                                };
                                store.commit_async(&id, step).await.unwrap();
                            }
                        })
                    })
                    .collect();
                for task in tasks {
                    task.await.unwrap();
                }
                let _ = done.send(store.list(1000).unwrap().len());
            });
        });
        let listed = finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("every session's steps finish: none waits forever for a pooled connection");
        assert_eq!(listed, sessions);
    }

    /// The connections live on the store's own thread, whatever runtime (or none) uses the
    /// store: it is used and dropped on a plain thread, on a `current_thread` runtime, in a
    /// task of a multi-thread one, and after the runtime it was opened on has ended. None of
    /// the drops panics or hangs (each joins the store's thread), and what each wrote is
    /// there for the next.
    #[test]
    fn the_store_is_dropped_inside_and_outside_a_runtime_without_a_panic_or_a_hang() {
        fn use_and_drop(url: &str, id: &str) {
            let store = PostgresStore::open(url, Some(PASSWORD)).unwrap();
            store.create(id, &Holder::this_process(), "c0", i64::MAX).unwrap();
            store.load(id).unwrap().expect("just made");
            drop(store);
        }
        let db = TestDatabase::postgres();
        let url = db.url().to_owned();
        use_and_drop(&url, "plain");
        let current_thread = || tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        current_thread().block_on(async { use_and_drop(&url, "current-thread") });
        let multi_thread =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let in_a_task = url.clone();
        let task = multi_thread.spawn(async move { use_and_drop(&in_a_task, "multi-thread") });
        multi_thread.block_on(task).unwrap();
        let outlived =
            current_thread().block_on(async { PostgresStore::open(&url, Some(PASSWORD)).unwrap() });
        let mut ids = outlived.list(10).unwrap();
        ids.sort();
        assert_eq!(ids, ["current-thread", "multi-thread", "plain"]);
        drop(outlived);
    }
}
