//! Steps committed in batches ([`super::super::group_commit`]): a step is made ready — its
//! messages encoded, what it borrows copied — by its own writer, outside the writer's lock,
//! and whichever writer commits next writes it beside the others queued, each in a savepoint
//! of one transaction, so that a step refused (its lease lost, a position taken) takes back
//! its own rows and nobody else's.

use rusqlite::{Connection, params};

use super::{SqliteStore, check_lease, fault_point, in_transaction, insert_summaries, insert_view};
use crate::compacted_history::CompactedHistory;
use crate::conversation::{Message, Role};
use crate::events::TokenUsage;
use crate::state::StateChange;
use crate::state::group_commit::Committer;
use crate::state::lease::{Fence, now_millis};
use crate::state::message_rows::{MessageRow, message_rows};
use crate::state::store::{Step, StoreError};

/// `messages` as rows, the first at `first_seq`; `usage` by history position.
pub(super) fn rows(first_seq: usize, messages: &[Message], usage: &[(usize, TokenUsage)]) -> Vec<MessageRow> {
    message_rows(first_seq, messages, usage).map(|(row, _)| row).collect()
}

/// A [`Step`] that owns what it writes, for a batch another writer may commit.
pub(crate) struct ReadyStep {
    id: String,
    /// The lease's holder token and taking.
    fence: Option<(String, u64)>,
    rows: Vec<MessageRow>,
    changes: Vec<StateChange>,
    /// A user message's step: the session's last use (ms) and its model calls.
    touch: Option<(i64, i64)>,
    view: Option<ReadyView>,
}

/// A compaction's new view: its generation, the view, and the summaries it adds.
type ReadyView = (u64, CompactedHistory, Vec<(u64, Message)>);

impl ReadyStep {
    pub(super) fn new(id: &str, step: Step<'_>) -> Self {
        let touches = step.messages.iter().any(|message| message.role == Role::User);
        Self {
            id: id.to_owned(),
            fence: step.lease.map(|fence| (fence.token.to_owned(), fence.generation)),
            rows: rows(step.first_seq, step.messages, step.usage),
            changes: step.changes.to_vec(),
            touch: touches.then(|| (now_millis(), step.model_calls as i64)),
            view: step.view.map(|change| (change.generation, change.view.clone(), change.summaries.to_vec())),
        }
    }
}

impl Committer for SqliteStore {
    type Job = ReadyStep;

    fn commit_batch(&self, steps: Vec<ReadyStep>) -> Vec<Result<(), StoreError>> {
        let connection = self.connection();
        let answers = if let [step] = &steps[..] {
            vec![in_transaction(&connection, |transaction| write(transaction, step))]
        } else {
            let mut answers = Vec::with_capacity(steps.len());
            let batch = in_transaction(&connection, |transaction| {
                for step in &steps {
                    answers.push(in_savepoint(transaction, step)?);
                }
                Ok(())
            });
            match batch {
                Ok(()) => answers,
                // The transaction itself failed (the database locked by another process past
                // the busy timeout, the disk full): nothing of the batch was written, and each
                // step is tried alone, so that each writer hears what refused its own.
                Err(_) => steps
                    .iter()
                    .map(|step| in_transaction(&connection, |transaction| write(transaction, step)))
                    .collect(),
            }
        };
        drop(connection);
        if let Some(checkpointer) = &self.checkpointer {
            checkpointer.committed();
        }
        answers
    }
}

/// Writes `step` in a savepoint of the open transaction: refused, its rows are taken back and
/// the refusal is its answer. `Err` only when the transaction itself is gone.
fn in_savepoint(connection: &Connection, step: &ReadyStep) -> Result<Result<(), StoreError>, StoreError> {
    connection.prepare_cached("SAVEPOINT step")?.execute([])?;
    match write(connection, step) {
        Ok(()) => {
            connection.prepare_cached("RELEASE step")?.execute([])?;
            Ok(Ok(()))
        }
        // SQLite ended the whole transaction on this error.
        Err(error) if connection.is_autocommit() => Err(error),
        Err(error) => {
            connection.prepare_cached("ROLLBACK TO step")?.execute([])?;
            connection.prepare_cached("RELEASE step")?.execute([])?;
            Ok(Err(error))
        }
    }
}

/// Writes one step's rows in the open transaction.
fn write(connection: &Connection, step: &ReadyStep) -> Result<(), StoreError> {
    let id = step.id.as_str();
    if let Some((token, generation)) = &step.fence {
        check_lease(connection, id, Fence { token, generation: *generation })?;
    }
    super::insert_messages(connection, id, &step.rows)?;
    let mut upsert = connection.prepare_cached(
        "INSERT OR REPLACE INTO state (session_id, namespace, key, value) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut delete = connection
        .prepare_cached("DELETE FROM state WHERE session_id = ?1 AND namespace = ?2 AND key = ?3")?;
    for change in &step.changes {
        match &change.value {
            Some(value) => upsert.execute(params![id, change.namespace, change.key, value])?,
            None => delete.execute(params![id, change.namespace, change.key])?,
        };
    }
    if let Some((now, model_calls)) = step.touch {
        connection
            .prepare_cached("UPDATE sessions SET updated_at = ?2, model_calls = ?3 WHERE id = ?1")?
            .execute(params![id, now, model_calls])?;
    }
    if let Some((generation, view, summaries)) = &step.view {
        insert_summaries(connection, id, summaries)?;
        fault_point("view-summaries-written");
        insert_view(connection, id, *generation, view)?;
        fault_point("view-written");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::SessionStore as _;
    use crate::state::lease::{Holder, LeaseAnswer};

    fn step<'a>(
        fence: Fence<'a>,
        first_seq: usize,
        messages: &'a [Message],
        changes: &'a [StateChange],
    ) -> Step<'a> {
        Step { lease: Some(fence), first_seq, messages, usage: &[], changes, model_calls: 1, view: None }
    }

    /// Three sessions' steps in one batch, the second's lease taken by another holder and the
    /// third's position already written: the first is written whole, the others write
    /// nothing and each hears its own refusal.
    #[test]
    fn a_step_refused_in_a_batch_takes_back_its_own_rows_and_no_one_elses() {
        let store = SqliteStore::in_memory().unwrap();
        let (here, there) = (Holder::this_process(), Holder::this_process());
        let mut takings = Vec::new();
        for id in ["a", "b", "c"] {
            takings.push(store.create(id, &here, "claim", i64::MAX).unwrap().generation);
        }
        store.release_lease("b", "claim").unwrap();
        let LeaseAnswer::Taken(_) = store.lease("b", &there, "theirs", i64::MAX, None).unwrap() else {
            panic!("the lease could be taken over")
        };
        let first = [Message::user("first")];
        let fence_c = Fence { token: &here.token, generation: takings[2] };
        store.commit("c", step(fence_c, 0, &first, &[])).unwrap();

        let said = [Message::user("hello"), Message::assistant("hi", vec![])];
        let change =
            |value: &str| StateChange { namespace: "p".into(), key: "k".into(), value: Some(value.into()) };
        let (change_a, change_b, change_c) = ([change("a")], [change("b")], [change("c")]);
        let batch = vec![
            ReadyStep::new(
                "a",
                step(Fence { token: &here.token, generation: takings[0] }, 0, &said, &change_a),
            ),
            ReadyStep::new(
                "b",
                step(Fence { token: &here.token, generation: takings[1] }, 0, &said, &change_b),
            ),
            ReadyStep::new("c", step(fence_c, 0, &said, &change_c)),
        ];
        let answers = store.commit_batch(batch);

        assert!(answers[0].is_ok(), "{:?}", answers[0]);
        assert!(
            matches!(&answers[1], Err(StoreError::LeaseLost { session, .. }) if session == "b"),
            "{:?}",
            answers[1]
        );
        assert!(
            matches!(&answers[2], Err(StoreError::PositionTaken { session, seq: 0 }) if session == "c"),
            "{:?}",
            answers[2]
        );
        let a = store.load("a").unwrap().unwrap();
        assert_eq!(a.history, said);
        assert_eq!(a.state, [("p".to_owned(), "k".to_owned(), "a".to_owned())]);
        assert_eq!(a.model_calls, 1);
        let b = store.load("b").unwrap().unwrap();
        assert!(b.history.is_empty() && b.state.is_empty(), "{b:?}");
        let c = store.load("c").unwrap().unwrap();
        assert_eq!(c.history, first);
        assert!(c.state.is_empty(), "{c:?}");
    }

    /// Writers on many threads at once, each its own session: every step lands, in order.
    #[test]
    fn steps_committed_at_once_from_many_threads_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(SqliteStore::open(&dir.path().join("s.db")).unwrap());
        let writers: Vec<_> = (0..8)
            .map(|writer| {
                let store = store.clone();
                std::thread::spawn(move || {
                    let holder = Holder::this_process();
                    let id = format!("s{writer}");
                    let generation = store.create(&id, &holder, "c", i64::MAX).unwrap().generation;
                    for seq in 0..50 {
                        let messages = [Message::user(format!("{writer}/{seq}"))];
                        let fence = Fence { token: &holder.token, generation };
                        store.commit(&id, step(fence, seq, &messages, &[])).unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        for writer in 0..8 {
            let history = store.load(&format!("s{writer}")).unwrap().unwrap().history;
            let expected: Vec<_> = (0..50).map(|seq| Message::user(format!("{writer}/{seq}"))).collect();
            assert_eq!(history, expected);
        }
    }
}
