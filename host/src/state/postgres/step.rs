//! A step made durable in one round trip: the whole of it is one call of the server's
//! `agent_host_commit_step` (`migrations/V5__commit_step.sql`, its lease checked under a
//! lock since `V9__leases_fenced_by_lock.sql`), its own transaction, whose
//! refusals come back as errors of our own SQLSTATEs and are turned back here into the store's
//! typed errors — the same a step written statement by statement was refused with.

use tokio_postgres::error::SqlState;

use super::pool::Client;
use crate::conversation::Role;
use crate::state::lease::now_millis;
use crate::state::message_rows::{MessageRow, message_rows};
use crate::state::store::{Step, StoreError};

const COMMIT_STEP: &str = "SELECT agent_host_commit_step($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)";

/// The lease is not (any more) the writer's taking.
const LEASE_LOST: &str = "AH001";
/// A message position is taken; the message is the position.
const POSITION_TAKEN: &str = "AH002";
/// A view generation is taken; the message is the generation.
const VIEW_TAKEN: &str = "AH003";

/// A step's parameters, owned, so that its call can run as a task of the store's thread.
pub(super) struct Prepared {
    id: String,
    token: Option<String>,
    generation: Option<i64>,
    first_seq: i64,
    bodies: Vec<String>,
    usages: Vec<Option<String>>,
    prompts: Vec<Option<String>>,
    namespaces: Vec<String>,
    keys: Vec<String>,
    values: Vec<Option<String>>,
    touch: bool,
    now: i64,
    model_calls: i64,
    view_generation: Option<i64>,
    view_covers: Option<i64>,
    view_entries: Option<String>,
    summary_ids: Vec<i64>,
    summary_bodies: Vec<String>,
}

impl Prepared {
    pub(super) fn new(id: &str, step: &Step<'_>) -> Self {
        let mut bodies = Vec::with_capacity(step.messages.len());
        let mut usages = Vec::with_capacity(step.messages.len());
        let mut prompts = Vec::with_capacity(step.messages.len());
        for (MessageRow { body, usage, .. }, message) in
            message_rows(step.first_seq, step.messages, step.usage)
        {
            prompts.push((message.role == Role::User).then(|| super::rows::prompt(&message.content)));
            bodies.push(body);
            usages.push(usage);
        }
        let changes = last_change_of_each_key(step);
        let view = step.view.as_ref();
        let summaries = view.map_or(&[][..], |change| change.summaries);
        Self {
            id: id.to_owned(),
            token: step.lease.map(|fence| fence.token.to_owned()),
            generation: step.lease.map(|fence| fence.generation as i64),
            first_seq: step.first_seq as i64,
            bodies,
            usages,
            prompts,
            namespaces: changes.iter().map(|change| change.namespace.clone()).collect(),
            keys: changes.iter().map(|change| change.key.clone()).collect(),
            values: changes.iter().map(|change| change.value.clone()).collect(),
            touch: step.messages.iter().any(|message| message.role == Role::User),
            now: now_millis(),
            model_calls: step.model_calls as i64,
            view_generation: view.map(|change| change.generation as i64),
            view_covers: view.map(|change| change.view.covers as i64),
            view_entries: view.map(|change| {
                serde_json::to_string(&change.view.entries).expect("view entries always serialize")
            }),
            summary_ids: summaries.iter().map(|(number, _)| *number as i64).collect(),
            summary_bodies: summaries
                .iter()
                .map(|(_, message)| serde_json::to_string(message).expect("messages always serialize"))
                .collect(),
        }
    }
}

/// Commits the step `prepared` holds on `client`.
pub(super) async fn commit(client: &Client, prepared: &Prepared) -> Result<(), StoreError> {
    let statement = client.prepare_cached(COMMIT_STEP).await?;
    let step = prepared;
    let called = client
        .query(
            &statement,
            &[
                &step.id,
                &step.token,
                &step.generation,
                &step.first_seq,
                &step.bodies,
                &step.usages,
                &step.prompts,
                &step.namespaces,
                &step.keys,
                &step.values,
                &step.touch,
                &step.now,
                &step.model_calls,
                &step.view_generation,
                &step.view_covers,
                &step.view_entries,
                &step.summary_ids,
                &step.summary_bodies,
            ],
        )
        .await;
    match called {
        Ok(_) => Ok(()),
        Err(error) => Err(refusal(client, &step.id, error).await),
    }
}

/// The bag's changes, the last of each key only: one statement writes them all, and a row
/// cannot be written twice by one statement.
fn last_change_of_each_key<'a>(step: &'a Step<'_>) -> Vec<&'a crate::state::StateChange> {
    let mut seen = std::collections::HashSet::new();
    let mut changes: Vec<_> = step
        .changes
        .iter()
        .rev()
        .filter(|change| seen.insert((change.namespace.as_str(), change.key.as_str())))
        .collect();
    changes.reverse();
    changes
}

/// The store's error for what the call was refused with.
async fn refusal(client: &Client, id: &str, error: tokio_postgres::Error) -> StoreError {
    let Some(database) = error.as_db_error() else { return error.into() };
    let code = database.code();
    if *code == SqlState::from_code(LEASE_LOST) {
        // Who has the session now, for the error: read after the refusal, off the hot path.
        return match super::rows::lease_row(client, id).await {
            Ok(now) => crate::state::lease::lost(id, now),
            Err(error) => error,
        };
    }
    if *code == SqlState::from_code(POSITION_TAKEN)
        && let Ok(seq) = database.message().parse()
    {
        return StoreError::PositionTaken { session: id.to_owned(), seq };
    }
    if *code == SqlState::from_code(VIEW_TAKEN)
        && let Ok(generation) = database.message().parse()
    {
        return StoreError::ViewTaken { session: id.to_owned(), generation };
    }
    error.into()
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use crate::state::lease::{Holder, LeaseAnswer, now_millis};
    use crate::state::store::StoreError;
    use crate::state::store_tests::{fence, step};
    use crate::state::test_stores::TestDatabase;

    /// Waits until some connection waits for an advisory lock (a step's or a taking's).
    fn until_one_waits_for_the_lease(db: &TestDatabase) {
        let waiting = "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted";
        for _ in 0..3_000 {
            if db.query_i64(waiting) > 0 {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("nobody waited for the lease's lock");
    }

    /// A step in flight under a lease holds up its taking: the taker's lease cannot come
    /// between the step's check and its commit.
    #[test]
    fn a_lease_is_taken_only_once_the_step_checked_under_the_one_before_commits() {
        let db = TestDatabase::postgres();
        let store = db.open();
        let (first, second) = (Holder::this_process(), Holder::this_process());
        let taken = store.create("s1", &first, "c1", now_millis() - 1).unwrap();
        let mut writer = db.connect();
        let mut in_flight = writer.transaction().unwrap();
        in_flight
            .execute(
                "SELECT agent_host_commit_step('s1', $1, $2, 1, '{}', '{}', '{}', '{}', '{}', '{}',
                     FALSE, 0, 0, NULL, NULL, NULL, '{}', '{}')",
                &[&first.token, &(taken.generation as i64)],
            )
            .unwrap();
        let (took, taking) = mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| took.send(store.lease("s1", &second, "c2", i64::MAX, None).unwrap()).unwrap());
            until_one_waits_for_the_lease(&db);
            assert!(taking.try_recv().is_err(), "taken while the step was in flight");
            in_flight.commit().unwrap();
            let LeaseAnswer::Taken(theirs) = taking.recv().unwrap() else { panic!("the lease ran out") };
            assert_eq!(theirs.generation, taken.generation + 1);
        });
    }

    /// A step that comes while a taking is in flight waits for it, and then reads the new
    /// lease: it is refused, not written under the lease it was taken from.
    #[test]
    fn a_step_behind_a_taking_in_flight_is_refused_once_it_commits() {
        let db = TestDatabase::postgres();
        let store = db.open();
        let first = Holder::this_process();
        let taken = store.create("s1", &first, "c1", i64::MAX).unwrap();
        let mut taker = db.connect();
        let mut in_flight = taker.transaction().unwrap();
        let changed = in_flight
            .execute("UPDATE session_leases SET token = 'theirs', generation = generation + 1", &[])
            .unwrap();
        assert_eq!(changed, 1);
        let (stepped, step_result) = mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                stepped.send(store.commit("s1", step(fence(&first, taken.generation), 0, &[]))).unwrap()
            });
            until_one_waits_for_the_lease(&db);
            assert!(step_result.try_recv().is_err(), "written while the lease was being taken");
            in_flight.commit().unwrap();
            let refused = step_result.recv().unwrap();
            assert!(matches!(refused, Err(StoreError::LeaseLost { .. })), "{refused:?}");
        });
    }
}
