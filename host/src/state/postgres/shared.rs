//! The [`SharedLog`] of a [`PostgresStore`]: the log's tables (`migrations/V3__shared_log.sql`,
//! a batch of events one row since `V11__a_batch_of_events_in_one_row.sql`),
//! and LISTEN/NOTIFY on one channel whose payload is a session's id, sent when the
//! transaction that moved the session commits.
//!
//! The connection that LISTENs is not the pool's: it waits for notices on a thread of its
//! own with the synchronous client, so that a slow `woken` never holds up the store's
//! queries.

use std::time::Duration;

use postgres::NoTls;
use postgres::fallible_iterator::FallibleIterator;

use super::PostgresStore;
use super::connection::{execute, query, query_one, query_opt};
use crate::state::lease::now_millis;
use crate::state::shared::{Appended, LogPage, LoggedEvent, Moved, SharedLog, Woken};
use crate::state::store::StoreError;
use crate::state::wait::wait;

/// The channel every host listens on for events appended: `"NEWEST SESSION"`
/// (`migrations/V7__events_say_their_number.sql`).
const EVENTS: &str = "agent_host_events";
/// The channel every host listens on for asks answered: the session.
const ANSWERS: &str = "agent_host_sessions";
/// Many sessions' batches appended in one call (`migrations/V9__leases_fenced_by_lock.sql`,
/// `V11__a_batch_of_events_in_one_row.sql`), no session twice; answers each batch's number
/// before its first event, or nothing for one left out (its lease not the session's).
const APPEND: &str = "SELECT agent_host_append_batches($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// The call that appends `batches` (of distinct sessions, in the order their locks are to be
/// taken), keeping each session's newest `keep` events.
async fn append_batches(
    on: &impl deadpool_postgres::GenericClient,
    append: &tokio_postgres::Statement,
    batches: &[&Appended],
    keep: i64,
) -> Result<Vec<Option<i64>>, StoreError> {
    let sessions: Vec<&str> = batches.iter().map(|batch| batch.session.as_str()).collect();
    let tokens: Vec<Option<&str>> =
        batches.iter().map(|batch| batch.fence.as_ref().map(|(token, _)| token.as_str())).collect();
    let generations: Vec<Option<i64>> =
        batches.iter().map(|batch| batch.fence.as_ref().map(|(_, generation)| *generation as i64)).collect();
    let views: Vec<Option<&str>> = batches.iter().map(|batch| batch.views.as_deref()).collect();
    let events =
        batches.iter().enumerate().flat_map(|(at, batch)| batch.events.iter().map(move |event| (at, event)));
    let (mut of_batch, mut kinds, mut bodies) = (Vec::new(), Vec::new(), Vec::new());
    for (at, (kind, json)) in events {
        of_batch.push(at as i32 + 1);
        kinds.push(kind.as_str());
        bodies.push(json.as_str());
    }
    let row = on
        .query_one(
            append,
            &[&sessions, &tokens, &generations, &views, &of_batch, &kinds, &bodies, &keep, &EVENTS],
        )
        .await?;
    Ok(row.get(0))
}

/// `batches` in calls of distinct sessions: the first batch of each session in the first,
/// any second one in the next, and so on; within each, in the sessions' (bytes') order, as
/// every host's appends take the sessions' locks.
fn calls(batches: &[Appended]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..batches.len()).collect();
    // Stable: a session's batches stay in the order given, which is their events' order.
    order.sort_by(|a, b| batches[*a].session.cmp(&batches[*b].session));
    let mut calls: Vec<Vec<usize>> = Vec::new();
    let mut repeat = 0;
    for (n, at) in order.iter().enumerate() {
        let same = n > 0 && batches[order[n - 1]].session == batches[*at].session;
        repeat = if same { repeat + 1 } else { 0 };
        if calls.len() <= repeat {
            calls.push(Vec::new());
        }
        calls[repeat].push(*at);
    }
    calls
}

/// The channel every host listens on for cancels.
const CANCELS: &str = "agent_host_cancels";

/// How long a follower's connection waits before `woken` hears `None` (and may stop).
const TICK: Duration = Duration::from_secs(1);

impl SharedLog for PostgresStore {
    fn append(&self, batches: &[Appended], keep: usize) -> Result<Vec<Option<u64>>, StoreError> {
        let calls = calls(batches);
        let keep = i64::try_from(keep).unwrap_or(i64::MAX);
        wait(async {
            let mut client = self.pool.get().await?;
            let of_call =
                |call: &Vec<usize>| -> Vec<&Appended> { call.iter().map(|at| &batches[*at]).collect() };
            let answered = if let [call] = calls.as_slice() {
                // One call is one statement, atomic on its own: no transaction to begin and
                // commit, two round trips fewer. The relay's appends are all of this kind
                // (it groups a session's events into one batch).
                let append = client.prepare_cached(APPEND).await?;
                vec![append_batches(&client, &append, &of_call(call), keep).await?]
            } else {
                let transaction = client.transaction().await?;
                let append = transaction.prepare_cached(APPEND).await?;
                let sent = calls.iter().map(|call| {
                    let (append, transaction, batches) = (&append, &transaction, of_call(call));
                    async move { append_batches(transaction, append, &batches, keep).await }
                });
                // Sent one after the other without waiting (tokio-postgres pipelines the calls
                // of one client polled together) and run by the server in that order: one
                // round trip.
                let answered = futures_util::future::try_join_all(sent).await?;
                transaction.commit().await?;
                answered
            };
            let mut priors = vec![None; batches.len()];
            for (call, answers) in calls.iter().zip(answered) {
                for (at, prior) in call.iter().zip(answers) {
                    priors[*at] = prior.map(|prior| prior as u64);
                }
            }
            Ok(priors)
        })
    }

    fn events_after(&self, session: &str, after: u64, limit: usize) -> Result<LogPage, StoreError> {
        let (after, limit) = (after as i64, i64::try_from(limit).unwrap_or(i64::MAX));
        wait(async {
            let client = self.pool.get().await?;
            // One statement, so one snapshot: the oldest kept and the events after `after`
            // as of the same instant, in one round trip.
            let rows = query(
                &client,
                "SELECT kept.oldest, e.seq, e.kind, e.body
                 FROM (SELECT (
                     SELECT first_seq FROM session_event_batches WHERE session_id = $1
                     ORDER BY last_seq LIMIT 1
                 ) AS oldest) AS kept
                 LEFT JOIN LATERAL (
                     SELECT b.first_seq + x.n - 1 AS seq, x.kind, x.body
                     FROM session_event_batches b, unnest(b.kinds, b.bodies) WITH ORDINALITY AS x(kind, body, n)
                     WHERE b.session_id = $1 AND b.last_seq > $2 AND b.first_seq + x.n - 1 > $2
                     ORDER BY b.last_seq, x.n LIMIT $3
                 ) AS e ON TRUE
                 ORDER BY e.seq",
                &[&session, &after, &limit],
            )
            .await?;
            let oldest: Option<i64> = rows.first().and_then(|row| row.get(0));
            let events = rows
                .iter()
                .filter_map(|row| {
                    let seq: i64 = row.get::<_, Option<i64>>(1)?;
                    Some(LoggedEvent { seq: seq as u64, kind: row.get(2), json: row.get(3) })
                })
                .collect();
            Ok(LogPage { oldest_kept: oldest.map(|seq| seq as u64), events })
        })
    }

    fn views(&self, session: &str) -> Result<Option<(String, u64)>, StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            let row = query_opt(
                &client,
                "SELECT views, seq FROM session_event_views WHERE session_id = $1",
                &[&session],
            )
            .await?;
            Ok(row.map(|row| (row.get(0), row.get::<_, i64>(1) as u64)))
        })
    }

    fn last_event(&self, session: &str) -> Result<u64, StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            let last: i64 = query_one(
                &client,
                "SELECT COALESCE(MAX(last_seq), 0) FROM session_event_batches WHERE session_id = $1",
                &[&session],
            )
            .await?
            .get(0);
            Ok(last as u64)
        })
    }

    fn ask(&self, session: &str, id: &str) -> Result<(), StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            execute(
                &client,
                "INSERT INTO pending_asks (session_id, id, asked_at) VALUES ($1, $2, $3)
                 ON CONFLICT (session_id, id) DO UPDATE SET answer = NULL, asked_at = excluded.asked_at",
                &[&session, &id, &now_millis()],
            )
            .await?;
            Ok(())
        })
    }

    fn answer(&self, session: &str, id: &str, answer: &str) -> Result<bool, StoreError> {
        wait(async {
            let mut client = self.pool.get().await?;
            let transaction = client.transaction().await?;
            let answered = execute(
                &transaction,
                "UPDATE pending_asks SET answer = $3 WHERE session_id = $1 AND id = $2 AND answer IS NULL",
                &[&session, &id, &answer],
            )
            .await?
                == 1;
            if answered {
                execute(&transaction, "SELECT pg_notify($1, $2)", &[&ANSWERS, &session]).await?;
            }
            transaction.commit().await?;
            Ok(answered)
        })
    }

    fn answer_to(&self, session: &str, id: &str) -> Result<Option<String>, StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            let row = query_opt(
                &client,
                "SELECT answer FROM pending_asks WHERE session_id = $1 AND id = $2",
                &[&session, &id],
            )
            .await?;
            Ok(row.and_then(|row| row.get(0)))
        })
    }

    fn forget_ask(&self, session: &str, id: &str) -> Result<(), StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            execute(&client, "DELETE FROM pending_asks WHERE session_id = $1 AND id = $2", &[&session, &id])
                .await?;
            Ok(())
        })
    }

    fn request_cancel(&self, session: &str) -> Result<(), StoreError> {
        wait(async {
            let client = self.pool.get().await?;
            execute(&client, "SELECT pg_notify($1, $2)", &[&CANCELS, &session]).await?;
            Ok(())
        })
    }

    fn follow(&self, mut woken: Woken) -> Result<(), StoreError> {
        let (config, name) = (self.config.clone(), self.name.clone());
        std::thread::Builder::new()
            .name("postgres-follow".into())
            .spawn(move || {
                while listen(&config, &name, &mut woken) {
                    std::thread::sleep(TICK);
                }
            })
            .map(drop)
            .map_err(|error| {
                StoreError::Unavailable(format!("cannot start the thread that follows sessions: {error}"))
            })
    }
}

/// Listens on one connection until `woken` says stop (`false`) or the connection fails
/// (`true`: make another).
fn listen(config: &postgres::Config, name: &str, woken: &mut Woken) -> bool {
    let mut client = match config.connect(NoTls) {
        Ok(client) => client,
        Err(error) => {
            tracing::warn!("cannot follow the sessions of {name}: {}", super::with_causes(&error));
            return woken(Moved::Tick);
        }
    };
    if let Err(error) = client.batch_execute(&format!("LISTEN {EVENTS}; LISTEN {ANSWERS}; LISTEN {CANCELS}"))
    {
        tracing::warn!("cannot follow the sessions of {name}: {}", super::with_causes(&error));
        return woken(Moved::Tick);
    }
    if !woken(Moved::Listening) {
        return false;
    }
    loop {
        let mut notifications = client.notifications();
        let mut waiting = notifications.timeout_iter(TICK);
        loop {
            match waiting.next() {
                Ok(Some(notification)) => {
                    let Some(moved) = moved(notification.channel(), notification.payload()) else {
                        tracing::warn!(
                            "an unreadable notice on {}: {:?}",
                            notification.channel(),
                            notification.payload()
                        );
                        continue;
                    };
                    if !woken(moved) {
                        return false;
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!(
                        "lost the connection following the sessions of {name}: {}",
                        super::with_causes(&error)
                    );
                    return woken(Moved::Tick);
                }
            }
        }
        if !woken(Moved::Tick) {
            return false;
        }
    }
}

/// What a notice on `channel` says moved; `None` for one that cannot be read.
fn moved<'a>(channel: &str, payload: &'a str) -> Option<Moved<'a>> {
    match channel {
        EVENTS => {
            let (newest, session) = payload.split_once(' ')?;
            Some(Moved::Appended { session, newest: newest.parse().ok()? })
        }
        ANSWERS => Some(Moved::Answered(payload)),
        CANCELS => Some(Moved::Cancel(payload)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use crate::state::lease::Holder;
    use crate::state::shared::{Appended, LoggedEvent, Moved};
    use crate::state::test_stores::TestDatabase;

    fn batch(session: &str, texts: &[&str], views: Option<&str>) -> Appended {
        Appended {
            session: session.into(),
            events: texts
                .iter()
                .map(|text| ("note".to_owned(), format!("{{\"text\":\"{text}\"}}")))
                .collect(),
            views: views.map(str::to_owned),
            fence: None,
        }
    }

    fn texts(events: &[LoggedEvent]) -> Vec<(u64, String)> {
        events.iter().map(|event| (event.seq, event.json.clone())).collect()
    }

    #[test]
    fn a_notice_is_read_by_its_channel_and_an_unreadable_one_is_none() {
        use super::{ANSWERS, CANCELS, EVENTS, moved};
        assert_eq!(moved(EVENTS, "12 s 1"), Some(Moved::Appended { session: "s 1", newest: 12 }));
        assert_eq!(moved(ANSWERS, "12 s"), Some(Moved::Answered("12 s")));
        assert_eq!(moved(CANCELS, "s"), Some(Moved::Cancel("s")));
        for unreadable in ["s1", "x s1", "-1 s1", ""] {
            assert_eq!(moved(EVENTS, unreadable), None, "{unreadable:?}");
        }
        assert_eq!(moved("elsewhere", "s1"), None);
    }

    #[test]
    fn two_hosts_append_to_one_numbering_and_the_oldest_beyond_the_keep_are_dropped() {
        let db = TestDatabase::postgres();
        let (a, b) = (db.open(), db.open());
        let (a, b) = (a.shared().expect("shared"), b.shared().expect("shared"));
        let priors = a.append(&[batch("s2", &["x"], None), batch("s1", &["a1", "a2"], None)], 10);
        assert_eq!(priors.unwrap(), [Some(0), Some(0)], "each batch's number before its first");
        assert_eq!(b.append(&[batch("s1", &["b1"], Some("[1]"))], 10).unwrap(), [Some(2)]);
        let page = a.events_after("s1", 0, 100).unwrap();
        assert_eq!(page.oldest_kept, Some(1));
        let json = |text: &str| format!("{{\"text\":\"{text}\"}}");
        assert_eq!(texts(&page.events), [(1, json("a1")), (2, json("a2")), (3, json("b1"))]);
        assert_eq!(texts(&a.events_after("s1", 2, 100).unwrap().events), [(3, json("b1"))]);
        assert_eq!(texts(&a.events_after("s1", 0, 1).unwrap().events), [(1, json("a1"))], "a page");
        assert_eq!(a.views("s1").unwrap(), Some(("[1]".to_owned(), 3)), "as event 3 left them");
        assert_eq!(a.views("s2").unwrap(), None);
        assert_eq!(
            (a.last_event("s1").unwrap(), a.last_event("s2").unwrap(), a.last_event("s3").unwrap()),
            (3, 1, 0)
        );

        assert_eq!(b.append(&[batch("s1", &["b2", "b3", "b4"], None)], 4).unwrap(), [Some(3)]);
        let page = a.events_after("s1", 1, 100).unwrap();
        assert_eq!(page.oldest_kept, Some(3), "events 1 and 2 are past the newest four");
        assert_eq!(page.events.first().map(|event| event.seq), Some(3));
        assert_eq!(a.last_event("s1").unwrap(), 6);
        let caught_up = a.events_after("s1", 6, 100).unwrap();
        assert_eq!(
            (caught_up.oldest_kept, caught_up.events.len()),
            (Some(3), 0),
            "nothing new, the oldest still said"
        );
        // The server's append answers the number before the batch's first event, so a writer
        // knows its events' numbers without reading them back.
        let prior = db.query_i64(
            "SELECT agent_host_append_events('s1', NULL, NULL, ARRAY['kind'], ARRAY['{}'], NULL, 100, 'unheard')",
        );
        assert_eq!((prior, a.last_event("s1").unwrap()), (6, 7));
        // Two batches of one session in one append: numbered on in the order given.
        let twice = a.append(
            &[batch("s3", &["c1"], None), batch("s2", &["y"], None), batch("s3", &["c2", "c3"], None)],
            100,
        );
        assert_eq!(twice.unwrap(), [Some(0), Some(1), Some(1)]);
        assert_eq!(
            texts(&a.events_after("s3", 0, 100).unwrap().events),
            [(1, json("c1")), (2, json("c2")), (3, json("c3"))]
        );
        let none = a.events_after("s9", 0, 100).unwrap();
        assert_eq!((none.oldest_kept, none.events.len()), (None, 0), "a session with no log");
    }

    /// A batch is one row: kept whole while any of its events is among the newest `keep`,
    /// and read from its first event; paged within it.
    #[test]
    fn a_batch_is_kept_or_dropped_whole_and_read_event_by_event() {
        let db = TestDatabase::postgres();
        let log = db.open();
        let log = log.shared().expect("shared");
        log.append(&[batch("s1", &["a1", "a2", "a3"], None)], 4).unwrap();
        log.append(&[batch("s1", &["b1", "b2"], None)], 4).unwrap();
        let json = |text: &str| format!("{{\"text\":\"{text}\"}}");
        let page = log.events_after("s1", 0, 100).unwrap();
        assert_eq!(page.oldest_kept, Some(1), "event 1 is past the newest four, but its batch is not");
        assert_eq!(texts(&page.events).len(), 5);
        assert_eq!(
            texts(&log.events_after("s1", 1, 2).unwrap().events),
            [(2, json("a2")), (3, json("a3"))],
            "a page begun and ended inside a batch"
        );
        assert_eq!(
            texts(&log.events_after("s1", 3, 100).unwrap().events),
            [(4, json("b1")), (5, json("b2"))]
        );
        log.append(&[batch("s1", &["c1", "c2"], None)], 4).unwrap();
        let page = log.events_after("s1", 0, 100).unwrap();
        assert_eq!(page.oldest_kept, Some(4), "the first batch, all of it past the newest four, went");
        assert_eq!(page.events.iter().map(|event| event.seq).collect::<Vec<_>>(), [4, 5, 6, 7]);
        assert_eq!(db.query_i64("SELECT COUNT(*) FROM session_event_batches"), 2, "a row a batch");
    }

    #[test]
    fn a_batch_under_a_lease_that_is_not_the_sessions_any_more_is_left_out() {
        let db = TestDatabase::postgres();
        let store = db.open();
        let (first, second) = (Holder::this_process(), Holder::this_process());
        let taken = store.create("s1", &first, "c1", crate::state::lease::now_millis() - 1).unwrap();
        let log = store.shared().unwrap();
        let under = |holder: &Holder, generation: u64, text: &str| Appended {
            fence: Some((holder.token.clone(), generation)),
            ..batch("s1", &[text], None)
        };
        assert_eq!(log.append(&[under(&first, taken.generation, "mine")], 10).unwrap(), [Some(0)]);
        let crate::state::lease::LeaseAnswer::Taken(theirs) =
            store.lease("s1", &second, "c2", i64::MAX, None).unwrap()
        else {
            panic!("the lease ran out")
        };
        let written =
            log.append(&[under(&first, taken.generation, "stale"), batch("s2", &["other"], None)], 10);
        assert_eq!(written.unwrap(), [None, Some(0)], "the stale batch alone is left out");
        assert_eq!(log.append(&[under(&second, theirs.generation, "theirs")], 10).unwrap(), [Some(1)]);
        let json = |text: &str| format!("{{\"text\":\"{text}\"}}");
        assert_eq!(
            texts(&log.events_after("s1", 0, 10).unwrap().events),
            [(1, json("mine")), (2, json("theirs"))]
        );
        assert_eq!(log.last_event("s2").unwrap(), 1);
    }

    /// A holder renews every lease it has in one statement while its relay appends batches
    /// of many sessions' events, each batch locking those sessions' leases: locked in
    /// different orders, the two deadlocked and a batch of events was lost (a stream then
    /// waited for a `turn_ended` that was never written).
    #[test]
    fn renewing_leases_beside_batches_of_many_sessions_never_deadlocks() {
        let db = TestDatabase::postgres();
        let (store, relay) = (db.open(), db.open());
        let holder = Holder::this_process();
        let sessions: Vec<(String, u64)> = (0..40)
            .map(|n| {
                let id = format!("s{n:02}");
                let generation = store.create(&id, &holder, "c", i64::MAX).unwrap().generation;
                (id, generation)
            })
            .collect();
        let renewing = std::sync::atomic::AtomicBool::new(true);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while renewing.load(std::sync::atomic::Ordering::Relaxed) {
                    store.renew_leases(&holder.token, i64::MAX - 1).unwrap();
                }
            });
            for round in 0..150 {
                // Batches come in the order their sessions' events arrived: any.
                let mut batches: Vec<Appended> = sessions
                    .iter()
                    .map(|(id, generation)| Appended {
                        fence: Some((holder.token.clone(), *generation)),
                        ..batch(id, &["e"], None)
                    })
                    .collect();
                if round % 2 == 0 {
                    batches.reverse();
                }
                let written = relay.shared().unwrap().append(&batches, 10).unwrap();
                assert!(written.iter().all(Option::is_some), "round {round}: every batch written");
            }
            renewing.store(false, std::sync::atomic::Ordering::Relaxed);
        });
        assert_eq!(relay.shared().unwrap().last_event("s00").unwrap(), 150);
    }

    #[test]
    fn an_ask_is_answered_once_from_any_host_and_a_deleted_session_leaves_no_log() {
        let db = TestDatabase::postgres();
        let (here, there) = (db.open(), db.open());
        let (a, b) = (here.shared().unwrap(), there.shared().unwrap());
        assert!(!b.answer("s1", "call_1", "\"once\"").unwrap(), "nothing waits yet");
        a.ask("s1", "call_1").unwrap();
        assert_eq!(a.answer_to("s1", "call_1").unwrap(), None);
        assert!(b.answer("s1", "call_1", "\"once\"").unwrap());
        assert!(!b.answer("s1", "call_1", "\"deny\"").unwrap(), "answered already");
        assert_eq!(a.answer_to("s1", "call_1").unwrap().as_deref(), Some("\"once\""));
        a.forget_ask("s1", "call_1").unwrap();
        assert!(!b.answer("s1", "call_1", "\"once\"").unwrap(), "forgotten");

        here.create("s1", &Holder::this_process(), "c", i64::MAX).unwrap();
        a.append(&[batch("s1", &["e"], Some("[]"))], 10).unwrap();
        a.ask("s1", "call_2").unwrap();
        assert!(here.delete("s1").unwrap());
        assert_eq!((a.last_event("s1").unwrap(), a.views("s1").unwrap()), (0, None));
        assert!(!b.answer("s1", "call_2", "\"once\"").unwrap());
    }

    #[test]
    fn a_follower_is_woken_by_another_hosts_append_with_its_newest_number_and_by_an_answer() {
        let db = TestDatabase::postgres();
        let (here, there) = (db.open(), db.open());
        let (woken, wakes) = mpsc::channel();
        here.shared()
            .unwrap()
            .follow(Box::new(move |moved| match moved {
                Moved::Appended { session, newest } => woken.send(format!("{session} at {newest}")).is_ok(),
                Moved::Answered(session) => woken.send(format!("answered {session}")).is_ok(),
                Moved::Cancel(session) => woken.send(format!("cancel {session}")).is_ok(),
                Moved::Listening => woken.send("listening".to_owned()).is_ok(),
                Moved::Tick => true,
            }))
            .unwrap();
        let other = there.shared().unwrap();
        assert_eq!(wakes.recv_timeout(std::time::Duration::from_secs(10)).unwrap(), "listening");
        // Listening is said once the LISTEN has run: every notice after it reaches us.
        other.append(&[batch("s9", &["e"], None)], 100).unwrap();
        other.append(&[batch("s9", &["f", "g"], None)], 100).unwrap();
        let mut heard = std::iter::from_fn(|| wakes.recv_timeout(std::time::Duration::from_secs(10)).ok());
        let appended: Vec<String> = heard.by_ref().take(2).collect();
        assert_eq!(appended, ["s9 at 1", "s9 at 3"], "each batch's newest number, in order");
        other.ask("s7", "call").unwrap();
        assert!(other.answer("s7", "call", "\"once\"").unwrap());
        assert_eq!(heard.next().as_deref(), Some("answered s7"));
        other.request_cancel("s5").unwrap();
        assert_eq!(heard.next().as_deref(), Some("cancel s5"));
    }
}
