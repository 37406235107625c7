//! The reads and writes the [`super::PostgresStore`]'s methods are made of, each on a
//! transaction the method opened: the same rows, and the same refusals, as SQLite's.

use deadpool_postgres::GenericClient;
use tokio_postgres::error::SqlState;

use super::connection::{execute, query, query_opt};
use crate::compacted_history::{CompactedHistory, Summaries};
use crate::conversation::{Message, Role};
use crate::events::TokenUsage;
use crate::state::lease::{HeldLease, Holder, HolderRole, Taken, now_millis};
use crate::state::listing::{SessionEntry, title};
use crate::state::message_rows::{MessageRow, message_rows};
use crate::state::store::{StoreError, StoredView};

/// Takes the lease on `$1` unless another holder's is live (see `SessionStore::lease`), as
/// the session's next generation (see SQLite's `TAKE_LEASE`). One statement: the row is
/// locked while its `WHERE` is checked, so two takers cannot both win.
const TAKE_LEASE: &str = "
INSERT INTO session_leases (session_id, token, claim, pid, host, pid_namespace, expires_at, generation, took_over, role)
VALUES ($1, $2, $3, $4, $5, $6, $7, 1, FALSE, $10)
ON CONFLICT (session_id) DO UPDATE SET
    token = excluded.token, claim = excluded.claim, pid = excluded.pid, host = excluded.host,
    pid_namespace = excluded.pid_namespace, expires_at = excluded.expires_at, role = excluded.role,
    generation = session_leases.generation + 1,
    took_over = (session_leases.token <> excluded.token AND session_leases.expires_at <> 0)
WHERE session_leases.token = excluded.token OR session_leases.expires_at <= $8
    OR session_leases.token = $9
RETURNING generation, took_over";

/// A new session's row and its lease, in one statement: atomic without a transaction, and
/// one round trip rather than four. Made at `$8`, the time the lease is taken.
static CREATE_WITH_LEASE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "WITH made AS (INSERT INTO sessions (id, created_at, updated_at) VALUES ($1, $8, $8)) {TAKE_LEASE}"
    )
});

/// The taking of the lease on `id`, or `None` when another holder's is live.
pub(super) async fn take_lease(
    on: &impl GenericClient,
    id: &str,
    holder: &Holder,
    claim: &str,
    expires_at: i64,
    replacing: Option<&str>,
) -> Result<Option<Taken>, StoreError> {
    lease_statement(on, TAKE_LEASE, id, holder, claim, expires_at, replacing).await
}

/// Makes session `id` (made now) with its first lease; `None` when another holder's lease
/// on that id is live.
pub(super) async fn create_with_lease(
    on: &impl GenericClient,
    id: &str,
    holder: &Holder,
    claim: &str,
    expires_at: i64,
) -> Result<Option<Taken>, StoreError> {
    lease_statement(on, &CREATE_WITH_LEASE, id, holder, claim, expires_at, None).await
}

/// `sql`: [`TAKE_LEASE`], or [`CREATE_WITH_LEASE`], which takes its parameters.
async fn lease_statement(
    on: &impl GenericClient,
    sql: &str,
    id: &str,
    holder: &Holder,
    claim: &str,
    expires_at: i64,
    replacing: Option<&str>,
) -> Result<Option<Taken>, StoreError> {
    let (pid, now) = (i64::from(holder.pid), now_millis());
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 10] = [
        &id,
        &holder.token,
        &claim,
        &pid,
        &holder.host,
        &holder.pid_namespace,
        &expires_at,
        &now,
        &replacing,
        &holder.role.as_str(),
    ];
    let taken = query_opt(on, sql, &params).await?;
    Ok(taken.map(|row| Taken { generation: row.get::<_, i64>(0).max(0) as u64, took_over: row.get(1) }))
}

/// The lease of a new session: no other holder can have it.
pub(super) fn first_lease(taken: Option<Taken>, id: &str) -> Result<Taken, StoreError> {
    taken.ok_or_else(|| StoreError::Unavailable(format!("session {id}'s lease was taken as it was made")))
}

/// The lease on a session, as stored. `FOR UPDATE` when `lock`: the row stays as read until
/// the transaction ends, so a lease checked is not taken before the step is written.
pub(super) async fn held_lease(
    on: &impl GenericClient,
    id: &str,
    lock: bool,
) -> Result<Option<HeldLease>, StoreError> {
    let select =
        "SELECT token, pid, host, pid_namespace, expires_at, role FROM session_leases WHERE session_id = $1";
    let sql = if lock { format!("{select} FOR UPDATE") } else { select.to_owned() };
    let Some(row) = query_opt(on, &sql, &[&id]).await? else { return Ok(None) };
    Ok(Some(HeldLease {
        holder: Holder {
            token: row.get(0),
            pid: u32::try_from(row.get::<_, i64>(1)).unwrap_or(0),
            host: row.get(2),
            pid_namespace: row.get(3),
            role: HolderRole::from_stored(row.get(5)),
        },
        expires_at: row.get(4),
    }))
}

/// The session's lease as stored, unlocked: who has it now, for a step refused as
/// [`StoreError::LeaseLost`].
pub(super) async fn lease_row(on: &impl GenericClient, id: &str) -> Result<Option<HeldLease>, StoreError> {
    held_lease(on, id, false).await
}

fn is_unique_violation(error: &tokio_postgres::Error) -> bool {
    error.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

/// Appends `messages` at `first_seq` on, each reply with its usage; a position is written
/// once ([`StoreError::PositionTaken`]).
pub(super) async fn insert_messages(
    on: &impl GenericClient,
    id: &str,
    first_seq: usize,
    messages: &[Message],
    usage: &[(usize, TokenUsage)],
) -> Result<(), StoreError> {
    for (MessageRow { seq, body, usage }, message) in message_rows(first_seq, messages, usage) {
        let prompt = (message.role == Role::User).then(|| prompt(&message.content));
        let insert =
            "INSERT INTO messages (session_id, seq, body, usage, prompt) VALUES ($1, $2, $3, $4, $5)";
        execute(on, insert, &[&id, &seq, &body, &usage, &prompt]).await.map_err(|error| {
            if is_unique_violation(&error) {
                StoreError::PositionTaken { session: id.to_owned(), seq }
            } else {
                error.into()
            }
        })?;
    }
    Ok(())
}

/// What of a user message's text a listing may show: its first characters (a title is
/// short), without the NULs PostgreSQL's text cannot hold.
pub(super) fn prompt(content: &str) -> String {
    content.chars().filter(|c| *c != '\0').take(PROMPT_CHARS).collect()
}

/// As many characters as SQLite's listing reads of a first prompt.
const PROMPT_CHARS: usize = 1_000;

pub(super) async fn insert_summaries(
    on: &impl GenericClient,
    id: &str,
    summaries: &[(u64, Message)],
) -> Result<(), StoreError> {
    for (number, message) in summaries {
        let body = serde_json::to_string(message).expect("messages always serialize");
        execute(
            on,
            "INSERT INTO summaries (session_id, id, body) VALUES ($1, $2, $3)",
            &[&id, &(*number as i64), &body],
        )
        .await?;
    }
    Ok(())
}

/// Writes `view` as the session's `generation`, once ([`StoreError::ViewTaken`]).
pub(super) async fn insert_view(
    on: &impl GenericClient,
    id: &str,
    generation: u64,
    view: &CompactedHistory,
) -> Result<(), StoreError> {
    let entries = serde_json::to_string(&view.entries).expect("view entries always serialize");
    execute(
        on,
        "INSERT INTO views (session_id, generation, covers, entries, created_at) VALUES ($1, $2, $3, $4, $5)",
        &[&id, &(generation as i64), &(view.covers as i64), &entries, &now_millis()],
    )
    .await
    .map_err(|error| {
        if is_unique_violation(&error) {
            StoreError::ViewTaken { session: id.to_owned(), generation }
        } else {
            error.into()
        }
    })?;
    Ok(())
}

pub(super) async fn load_summaries(on: &impl GenericClient, id: &str) -> Result<Summaries, StoreError> {
    let mut summaries = Summaries::new();
    for row in query(on, "SELECT id, body FROM summaries WHERE session_id = $1 ORDER BY id", &[&id]).await? {
        let number: i64 = row.get(0);
        let message = serde_json::from_str(row.get(1)).map_err(|error| StoreError::CorruptView {
            session: id.to_owned(),
            detail: format!("summary #{number}: {error}"),
        })?;
        summaries.insert(number as u64, message);
    }
    Ok(summaries)
}

/// The session's newest view, if it has one.
pub(super) async fn load_view(on: &impl GenericClient, id: &str) -> Result<Option<StoredView>, StoreError> {
    let Some(row) = query_opt(
        on,
        "SELECT generation, covers, entries FROM views WHERE session_id = $1 ORDER BY generation DESC LIMIT 1",
        &[&id],
    )
    .await?
    else {
        return Ok(None);
    };
    let (generation, covers): (i64, i64) = (row.get(0), row.get(1));
    let entries = serde_json::from_str(row.get(2)).map_err(|error| StoreError::CorruptView {
        session: id.to_owned(),
        detail: format!("view {generation}: {error}"),
    })?;
    Ok(Some(StoredView {
        generation: generation as u64,
        view: CompactedHistory { covers: covers as usize, entries },
    }))
}

/// A session as a listing shows it (`FROM sessions` follows): its first user message's
/// `prompt` and its size from its last position, both through the messages' key; whether its
/// lease runs past `now`, the parameter named.
pub(super) fn session_entry_select(now: &str) -> String {
    format!(
        "SELECT sessions.id, sessions.updated_at,
    (SELECT prompt FROM messages
     WHERE session_id = sessions.id AND prompt IS NOT NULL ORDER BY seq LIMIT 1),
    (SELECT MAX(seq) + 1 FROM messages WHERE session_id = sessions.id),
    EXISTS (SELECT 1 FROM session_leases WHERE session_id = sessions.id AND expires_at > {now})"
    )
}

pub(super) fn session_entry(row: &tokio_postgres::Row) -> SessionEntry {
    let prompt: Option<String> = row.get(2);
    let messages: Option<i64> = row.get(3);
    SessionEntry {
        id: row.get(0),
        updated_at: row.get::<_, i64>(1) / 1_000,
        title: prompt.map(|prompt| title(&prompt)),
        messages: messages.unwrap_or(0).max(0) as u64,
        held: row.get(4),
    }
}
