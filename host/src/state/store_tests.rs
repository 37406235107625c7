//! What every [`SessionStore`] promises, run on SQLite and on PostgreSQL alike
//! ([`both_stores!`]): the same bodies, so the two stores cannot drift apart.

use super::lease::{Fence, Holder, LeaseAnswer, Taken, now_millis};
use super::test_stores::{TestDatabase, both_stores};
use super::{SessionEntry, StateChange, Step, StoreError};
use crate::conversation::Message;
use crate::events::TokenUsage;
use crate::tools::ToolCall;

both_stores!(
    entries_tell_sessions_apart_by_last_use_first_prompt_and_size,
    a_step_at_a_position_already_taken_fails_with_the_typed_error_and_replaces_nothing,
    a_live_lease_keeps_others_out_until_it_runs_out_or_is_released,
    a_writer_whose_lease_was_taken_cannot_commit,
    sessions_are_listed_and_counted_by_owner,
    a_deleted_session_leaves_nothing_and_others_are_untouched,
    a_step_round_trips_and_removals_delete,
    model_calls_come_back_from_the_replies_and_the_row_is_written_when_a_turn_starts,
    usage_is_kept_beside_its_reply_and_added_up_on_load,
    a_session_id_in_use_is_a_conflict,
    a_copy_is_whole_and_leased,
    of_many_processes_racing_for_a_lapsed_lease_one_wins_and_only_it_writes,
    a_nul_character_in_a_message_or_a_value_is_kept_and_listed,
    a_view_generation_already_written_fails_the_step_with_the_typed_error_and_writes_nothing,
);

/// A step of `messages` alone, from `first_seq`, under `lease`.
pub(crate) fn step<'a>(lease: Option<Fence<'a>>, first_seq: usize, messages: &'a [Message]) -> Step<'a> {
    Step { lease, first_seq, messages, usage: &[], changes: &[], model_calls: 0, view: None }
}

/// `holder`'s lease under `generation`.
pub(crate) fn fence(holder: &Holder, generation: u64) -> Option<Fence<'_>> {
    Some(Fence { token: &holder.token, generation })
}

/// The taking, or the lease that kept `holder` out.
fn take(
    store: &dyn super::SessionStore,
    holder: &Holder,
    claim: &str,
    expires_at: i64,
    replacing: Option<&str>,
) -> Result<Taken, super::lease::HeldLease> {
    match store.lease("s1", holder, claim, expires_at, replacing).unwrap() {
        LeaseAnswer::Taken(taken) => Ok(taken),
        LeaseAnswer::HeldBy(held) => Err(held),
    }
}

fn entries_tell_sessions_apart_by_last_use_first_prompt_and_size(db: &TestDatabase) {
    let store = db.open();
    for id in ["old", "new", "empty"] {
        store.create(id, &Holder::this_process(), "c0", i64::MAX).unwrap();
    }
    // Whether each is held: `new` is, `old` was let go, `empty`'s lease ran out.
    store.release_lease("old", "c0").unwrap();
    let now = now_millis();
    store.release_lease("empty", "c0").unwrap();
    let ran_out = store.lease("empty", &Holder::this_process(), "c1", now - 1, None).unwrap();
    assert!(matches!(ran_out, LeaseAnswer::Taken(_)), "{ran_out:?}");
    let old = [
        Message::user("  fix the\n\tbuild \x1b[2J please"),
        Message::assistant("done", vec![]),
        Message::user("and the docs"),
    ];
    store.commit("old", step(None, 0, &old)).unwrap();
    let long = "word ".repeat(100);
    store.commit("new", step(None, 0, &[Message::user(long.as_str())])).unwrap();
    // The times they were last used, set apart (ms since the epoch).
    db.execute(
        "UPDATE sessions SET updated_at = 1000000 WHERE id = 'old';
         UPDATE sessions SET updated_at = 1500000 WHERE id = 'empty';
         UPDATE sessions SET updated_at = 2000000 WHERE id = 'new';",
    );
    let entries = store.entries(10).unwrap();
    let title = format!("{}…", "word ".repeat(16).trim_end());
    assert_eq!(
        entries,
        [
            SessionEntry { id: "new".into(), updated_at: 2_000, title: Some(title), messages: 1, held: true },
            SessionEntry { id: "empty".into(), updated_at: 1_500, title: None, messages: 0, held: false },
            SessionEntry {
                id: "old".into(),
                updated_at: 1_000,
                title: Some("fix the build \\x1b[2J please".into()),
                messages: 3,
                held: false
            },
        ]
    );
    assert_eq!(store.entries(1).unwrap().len(), 1);
    assert_eq!(store.list(2).unwrap(), ["new", "empty"]);
    assert_eq!(store.list(usize::MAX).unwrap(), ["new", "empty", "old"], "no limit is no limit");
    assert_eq!(store.entries(usize::MAX).unwrap().len(), 3);
}

fn a_step_at_a_position_already_taken_fails_with_the_typed_error_and_replaces_nothing(db: &TestDatabase) {
    let store = db.open();
    store.create("s1", &Holder::this_process(), "c0", i64::MAX).unwrap();
    let first = [Message::user("one"), Message::assistant("two", vec![])];
    store.commit("s1", step(None, 0, &first)).unwrap();
    // A second writer that believed position 1 was next.
    let rival = [Message::assistant("rival", vec![]), Message::user("more")];
    let changes = [StateChange { namespace: "p".into(), key: "k".into(), value: Some("1".into()) }];
    let error =
        store.commit("s1", Step { changes: &changes, model_calls: 9, ..step(None, 1, &rival) }).unwrap_err();
    assert!(matches!(&error, StoreError::PositionTaken { session, seq: 1 } if session == "s1"), "{error:?}");
    let stored = store.load("s1").unwrap().unwrap();
    assert_eq!(stored.history, first, "the first writer's messages stand");
    assert!(stored.state.is_empty(), "nothing of the failed step was kept");
    // The store goes on: the failed step left no transaction open.
    store.commit("s1", step(None, 2, &[Message::user("next")])).unwrap();
    assert_eq!(store.load("s1").unwrap().unwrap().history.len(), 3);
}

fn a_live_lease_keeps_others_out_until_it_runs_out_or_is_released(db: &TestDatabase) {
    let store = db.open();
    let store = &*store;
    let (first, second) = (Holder::this_process(), Holder::this_process());
    let soon = now_millis() + 60_000;
    let taken = |generation, took_over| Ok(Taken { generation, took_over });
    assert_eq!(store.create("s1", &first, "c1", soon).unwrap(), Taken { generation: 1, took_over: false });
    let refused = take(store, &second, "c2", soon, None).expect_err("refused");
    assert_eq!(refused.holder, first);
    assert_eq!(refused.expires_at, soon);
    assert_eq!(take(store, &first, "c3", soon + 1, None), taken(2, false), "the holder may take it again");
    store.release_lease("s1", "c1").unwrap();
    assert!(take(store, &second, "c2", soon, None).is_err(), "an older claim releases nothing");
    assert_eq!(take(store, &second, "c2", soon, Some(&first.token)), taken(3, true), "replacing");
    assert_eq!(take(store, &first, "c4", soon, None).unwrap_err().holder, second);

    store.release_lease("s1", "c2").unwrap();
    assert_eq!(
        take(store, &first, "c5", now_millis() - 1, None),
        taken(4, false),
        "let go: free, no takeover"
    );
    // `first`'s lease has run out (it expired a moment ago): anyone may take it.
    assert_eq!(take(store, &second, "c6", soon, None), taken(5, true), "an expired lease is taken over");
    store.renew_leases(&second.token, soon + 5).unwrap();
    assert_eq!(take(store, &first, "c7", soon, None).unwrap_err().expires_at, soon + 5);
    store.release_lease("s1", "c6").unwrap();
    store.renew_leases(&second.token, soon + 9).unwrap();
    assert_eq!(take(store, &first, "c8", soon, None), taken(6, false), "a lease let go is not renewed");
}

fn a_writer_whose_lease_was_taken_cannot_commit(db: &TestDatabase) {
    let store = db.open();
    // Another process's store on the same database.
    let other = db.open();
    let (first, second) = (Holder::this_process(), Holder::this_process());
    let mine = store.create("s1", &first, "c1", now_millis() - 1).unwrap().generation;
    store.commit("s1", step(fence(&first, mine), 0, &[Message::user("mine")])).unwrap();
    let theirs = take(&*other, &second, "c2", i64::MAX, None).expect("the lease ran out").generation;
    let error = store.commit("s1", step(fence(&first, mine), 1, &[Message::user("late")])).unwrap_err();
    assert!(
        matches!(&error, StoreError::LeaseLost { holder, .. } if holder == &second.to_string()),
        "{error:?}"
    );
    other.commit("s1", step(fence(&second, theirs), 1, &[Message::user("theirs")])).unwrap();

    // The taker lets go; the writer that was paused wakes and tries again: still fenced.
    other.release_lease("s1", "c2").unwrap();
    let error = store.commit("s1", step(fence(&first, mine), 2, &[Message::user("stale")])).unwrap_err();
    assert!(
        matches!(&error, StoreError::LeaseLost { holder, .. } if holder.contains("let it go")),
        "{error:?}"
    );
    // The same holder taking the session again writes under the new taking only: a copy of
    // the session it still had from the old one is fenced too.
    let again = take(&*store, &first, "c3", i64::MAX, None).unwrap().generation;
    assert!(again > theirs, "generations only grow: {again} after {theirs}");
    let error = store.commit("s1", step(fence(&first, mine), 2, &[Message::user("stale")])).unwrap_err();
    assert!(matches!(error, StoreError::LeaseLost { .. }), "{error:?}");
    store.commit("s1", step(fence(&first, again), 2, &[Message::user("again")])).unwrap();
    assert_eq!(
        store.load("s1").unwrap().unwrap().history,
        [Message::user("mine"), Message::user("theirs"), Message::user("again")]
    );
}

fn sessions_are_listed_and_counted_by_owner(db: &TestDatabase) {
    let store = db.open();
    let owned = |id: &str, namespace: &str, owner: &str| {
        store.create(id, &Holder::this_process(), "c0", i64::MAX).unwrap();
        let value = serde_json::Value::from(owner).to_string();
        let changes = [StateChange { namespace: namespace.into(), key: "owner".into(), value: Some(value) }];
        store.commit(id, Step { changes: &changes, ..step(None, 0, &[Message::user("hi")]) }).unwrap();
    };
    owned("a1", crate::state::OWNER.0, "alice");
    owned("b1", crate::state::OWNER.0, "bob");
    owned("a2", crate::state::OWNER.0, "alice");
    // A plugin's own `owner` key names no owner of the session.
    owned("p1", "notes", "alice");
    assert_eq!(store.count_owned("alice", 10).unwrap(), 2);
    assert_eq!(store.count_owned("alice", 1).unwrap(), 1, "counted up to the cap asked about");
    assert_eq!(store.count_owned("bob", 10).unwrap(), 1);
    assert_eq!(store.count_owned("carol", 10).unwrap(), 0);
    let ids = |entries: Vec<SessionEntry>| entries.into_iter().map(|entry| entry.id).collect::<Vec<_>>();
    let mut alices = ids(store.entries_owned("alice", 10).unwrap());
    alices.sort();
    assert_eq!(alices, ["a1", "a2"]);
    assert_eq!(store.entries_owned("alice", 1).unwrap().len(), 1);
    assert_eq!(store.entries_owned("alice", usize::MAX).unwrap().len(), 2);
    assert_eq!(ids(store.entries_owned("bob", 10).unwrap()), ["b1"]);
    assert_eq!(store.entries_owned("bob", 10).unwrap()[0].title.as_deref(), Some("hi"));
    assert_eq!(store.state_value("b1", crate::state::OWNER.0, "owner").unwrap().as_deref(), Some("\"bob\""));
    assert_eq!(store.state_value("b1", "notes", "owner").unwrap(), None);

    // A session given to another owner counts for her; a deleted one for nobody; a step
    // that writes the same owner again changes no count.
    let give = |id: &str, owner: &str| {
        let value = serde_json::Value::from(owner).to_string();
        let changes = [StateChange {
            namespace: crate::state::OWNER.0.into(),
            key: "owner".into(),
            value: Some(value),
        }];
        store
            .commit(id, Step { changes: &changes, ..step(None, 1, &[Message::assistant("ok", vec![])]) })
            .unwrap();
    };
    let listed = |owner: &str| {
        let mut found = ids(store.entries_owned(owner, 10).unwrap());
        found.sort();
        found
    };
    give("a2", "bob");
    give("b1", "bob");
    assert_eq!((store.count_owned("alice", 10).unwrap(), store.count_owned("bob", 10).unwrap()), (1, 2));
    assert_eq!(
        (listed("alice"), listed("bob")),
        (vec!["a1".to_owned()], vec!["a2".to_owned(), "b1".to_owned()])
    );
    assert!(store.delete("a2").unwrap());
    assert_eq!((store.count_owned("alice", 10).unwrap(), store.count_owned("bob", 10).unwrap()), (1, 1));
    assert_eq!(listed("bob"), ["b1"]);
    let unowned = [StateChange { namespace: crate::state::OWNER.0.into(), key: "owner".into(), value: None }];
    store.commit("b1", Step { changes: &unowned, ..step(None, 2, &[Message::user("again")]) }).unwrap();
    assert_eq!(store.count_owned("bob", 10).unwrap(), 0, "the owner row removed");
    assert!(listed("bob").is_empty(), "listed no more");
}

fn a_deleted_session_leaves_nothing_and_others_are_untouched(db: &TestDatabase) {
    let store = db.open();
    let messages = [Message::user("hi"), Message::assistant("hello", vec![])];
    let changes = [StateChange { namespace: "notes".into(), key: "k".into(), value: Some("1".into()) }];
    let summary = [(1, Message::system("a summary"))];
    let view = crate::compacted_history::CompactedHistory {
        covers: 1,
        entries: vec![crate::compacted_history::MessageId::Summary(1)],
    };
    for id in ["gone", "kept"] {
        store.create(id, &Holder::this_process(), "c0", i64::MAX).unwrap();
        let change = super::ViewChange { generation: 1, view: &view, summaries: &summary };
        store
            .commit(
                id,
                Step { changes: &changes, model_calls: 1, view: Some(change), ..step(None, 0, &messages) },
            )
            .unwrap();
    }
    assert!(store.delete("gone").unwrap());
    assert!(!store.delete("gone").unwrap(), "a second delete finds nothing");
    assert!(store.load("gone").unwrap().is_none());
    assert_eq!(store.list(10).unwrap(), ["kept"]);
    for table in ["messages", "state", "summaries", "views", "session_leases"] {
        let left = db.query_i64(&format!("SELECT COUNT(*) FROM {table} WHERE session_id = 'gone'"));
        assert_eq!(left, 0, "{table}");
    }
    let kept = store.load("kept").unwrap().unwrap();
    assert_eq!(kept.history, messages);
    assert_eq!(kept.view.map(|view| view.view), Some(view));
}

fn a_step_round_trips_and_removals_delete(db: &TestDatabase) {
    let store = db.open();
    store.create("s1", &Holder::this_process(), "c0", i64::MAX).unwrap();
    let messages = [Message::user("hi"), Message::assistant("hello", vec![])];
    let changes = [
        StateChange { namespace: "notes".into(), key: "entries".into(), value: Some("[]".into()) },
        StateChange { namespace: "notes".into(), key: "gone".into(), value: Some("1".into()) },
    ];
    store.commit("s1", Step { changes: &changes, model_calls: 1, ..step(None, 0, &messages) }).unwrap();
    let changes = [
        StateChange { namespace: "notes".into(), key: "gone".into(), value: None },
        StateChange { namespace: "notes".into(), key: "entries".into(), value: Some("[1]".into()) },
    ];
    store.commit("s1", Step { changes: &changes, model_calls: 1, ..step(None, 2, &[]) }).unwrap();
    let loaded = store.load("s1").unwrap().unwrap();
    assert_eq!(loaded.history, messages);
    assert_eq!(loaded.state, vec![("notes".into(), "entries".into(), "[1]".into())]);
    assert_eq!(loaded.model_calls, 1);
    assert!(store.load("nope").unwrap().is_none());
}

fn model_calls_come_back_from_the_replies_and_the_row_is_written_when_a_turn_starts(db: &TestDatabase) {
    let store = db.open();
    store.create("s1", &Holder::this_process(), "c0", i64::MAX).unwrap();
    let recorded = || db.query_i64("SELECT model_calls FROM sessions WHERE id = 's1'");
    let call = ToolCall { id: "c1".into(), name: "notes_add".into(), arguments: "{}".into() };
    let start = [Message::user("go"), Message::assistant("", vec![call])];
    store.commit("s1", Step { model_calls: 1, ..step(None, 0, &start) }).unwrap();
    assert_eq!(recorded(), 1);
    let rest = [Message::tool("c1", "added"), Message::assistant("done", vec![])];
    store.commit("s1", Step { model_calls: 2, ..step(None, 2, &rest) }).unwrap();
    assert_eq!(recorded(), 1, "a step without a user message leaves the row alone");
    assert_eq!(store.load("s1").unwrap().unwrap().model_calls, 2);
}

fn usage_is_kept_beside_its_reply_and_added_up_on_load(db: &TestDatabase) {
    let store = db.open();
    store.create("s1", &Holder::this_process(), "c0", i64::MAX).unwrap();
    let first = TokenUsage {
        input_tokens: 1_200,
        output_tokens: 30,
        cache_read_tokens: 1_000,
        cache_write_tokens: 0,
    };
    let second =
        TokenUsage { input_tokens: 1_300, output_tokens: 7, cache_read_tokens: 0, cache_write_tokens: 250 };
    let messages = [
        Message::user("go"),
        Message::assistant("", vec![]),
        Message::user("again"),
        Message::assistant("done", vec![]),
    ];
    store.commit("s1", Step { usage: &[(1, first)], ..step(None, 0, &messages[..2]) }).unwrap();
    store.commit("s1", Step { usage: &[(3, second)], ..step(None, 2, &messages[2..]) }).unwrap();
    let loaded = store.load("s1").unwrap().unwrap();
    assert_eq!(loaded.reply_usage, [(1, first), (3, second)]);
    assert_eq!(
        loaded.usage,
        TokenUsage {
            input_tokens: 2_500,
            output_tokens: 37,
            cache_read_tokens: 1_000,
            cache_write_tokens: 250
        }
    );
}

fn a_session_id_in_use_is_a_conflict(db: &TestDatabase) {
    let store = db.open();
    store.create("s1", &Holder::this_process(), "c0", i64::MAX).unwrap();
    let error = store.create("s1", &Holder::this_process(), "c1", i64::MAX).unwrap_err();
    assert!(error.is_conflict(), "{error:?}");
    let error = store
        .create_copy("s1", &Holder::this_process(), "c2", i64::MAX, &Default::default(), None)
        .unwrap_err();
    assert!(error.is_conflict(), "{error:?}");
}

fn a_copy_is_whole_and_leased(db: &TestDatabase) {
    let store = db.open();
    let holder = Holder::this_process();
    store.create("source", &holder, "c0", i64::MAX).unwrap();
    let messages = [Message::user("hi"), Message::assistant("hello", vec![])];
    let used = TokenUsage { input_tokens: 5, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 };
    let changes = [StateChange { namespace: "notes".into(), key: "k".into(), value: Some("[1]".into()) }];
    let summary = [(1, Message::system("a summary"))];
    let view = crate::compacted_history::CompactedHistory {
        covers: 1,
        entries: vec![crate::compacted_history::MessageId::Summary(1)],
    };
    let change = super::ViewChange { generation: 1, view: &view, summaries: &summary };
    store
        .commit(
            "source",
            Step {
                usage: &[(1, used)],
                changes: &changes,
                model_calls: 1,
                view: Some(change),
                ..step(None, 0, &messages)
            },
        )
        .unwrap();
    let source = store.load("source").unwrap().unwrap();
    let copier = Holder::this_process();
    store.create_copy("copy", &copier, "c1", i64::MAX, &source, None).unwrap();
    assert_eq!(store.load("copy").unwrap().unwrap(), source);
    let LeaseAnswer::HeldBy(refused) = store.lease("copy", &holder, "c2", i64::MAX, None).unwrap() else {
        panic!("the copier holds it")
    };
    assert_eq!(refused.holder, copier);
    assert_eq!(store.load("source").unwrap().unwrap(), source, "the source is untouched");
}

fn of_many_processes_racing_for_a_lapsed_lease_one_wins_and_only_it_writes(db: &TestDatabase) {
    let store = db.open();
    store.create("s1", &Holder::this_process(), "c0", now_millis() - 1).unwrap();
    let racers = 6;
    let barrier = std::sync::Barrier::new(racers);
    let winners: Vec<Holder> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..racers)
            .map(|index| {
                let (barrier, store) = (&barrier, db.open());
                scope.spawn(move || {
                    let holder = Holder::this_process();
                    barrier.wait();
                    let taken = take(&*store, &holder, &format!("c{index}"), i64::MAX, None);
                    // Every racer tries to write its step at the same position, under the
                    // generation it took, or the one before for the losers.
                    let generation = taken.as_ref().map_or(1, |taken| taken.generation);
                    let written = store
                        .commit("s1", step(fence(&holder, generation), 0, &[Message::user(&holder.token)]));
                    match (taken, written) {
                        (Ok(_), Ok(())) => Some(holder),
                        (Err(_), Err(StoreError::LeaseLost { .. })) => None,
                        other => panic!("a racer got {other:?}"),
                    }
                })
            })
            .collect();
        runs.into_iter().filter_map(|run| run.join().unwrap()).collect()
    });
    let [winner] = &winners[..] else { panic!("{} racers won", winners.len()) };
    assert_eq!(store.load("s1").unwrap().unwrap().history, [Message::user(&winner.token)]);
}

fn a_nul_character_in_a_message_or_a_value_is_kept_and_listed(db: &TestDatabase) {
    let store = db.open();
    store.create("s1", &Holder::this_process(), "c0", i64::MAX).unwrap();
    // A tool's output read from a binary file, and a prompt pasted with one.
    let messages = [
        Message::user("look\0here"),
        Message::assistant("", vec![]),
        Message::tool("c1", "\u{0}\u{1}binary"),
        Message::assistant("done", vec![]),
    ];
    let value = serde_json::Value::from("a\0b").to_string();
    let changes = [StateChange { namespace: "notes".into(), key: "k".into(), value: Some(value.clone()) }];
    store.commit("s1", Step { changes: &changes, ..step(None, 0, &messages) }).unwrap();
    let loaded = store.load("s1").unwrap().unwrap();
    assert_eq!(loaded.history, messages);
    assert_eq!(loaded.state, [("notes".to_owned(), "k".to_owned(), value)]);
    let [entry] = &store.entries(10).unwrap()[..] else { panic!("one entry") };
    // SQLite's listing reads the prompt up to the NUL, PostgreSQL's without it.
    let title = entry.title.as_deref().unwrap();
    assert!(["look", "lookhere"].contains(&title), "{title:?}");
    assert_eq!(entry.messages, 4);
}

fn a_view_generation_already_written_fails_the_step_with_the_typed_error_and_writes_nothing(
    db: &TestDatabase,
) {
    let store = db.open();
    let holder = Holder::this_process();
    let taken = store.create("s1", &holder, "c0", i64::MAX).unwrap();
    let view = crate::compacted_history::CompactedHistory {
        covers: 1,
        entries: vec![crate::compacted_history::MessageId::Summary(1)],
    };
    let first = [(1, Message::system("a summary"))];
    let change = super::ViewChange { generation: 1, view: &view, summaries: &first };
    let messages = [Message::user("hi"), Message::assistant("hello", vec![])];
    store
        .commit("s1", Step { view: Some(change), ..step(fence(&holder, taken.generation), 0, &messages) })
        .unwrap();
    // A second writer that believed generation 1 was next.
    let rival = [(2, Message::system("a rival summary"))];
    let change = super::ViewChange { generation: 1, view: &view, summaries: &rival };
    let changes = [StateChange { namespace: "p".into(), key: "k".into(), value: Some("1".into()) }];
    let error = store
        .commit(
            "s1",
            Step {
                view: Some(change),
                changes: &changes,
                ..step(fence(&holder, taken.generation), 2, &[Message::user("more")])
            },
        )
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::ViewTaken { session, generation: 1 } if session == "s1"),
        "{error:?}"
    );
    let stored = store.load("s1").unwrap().unwrap();
    assert_eq!(stored.history, messages, "nothing of the failed step was kept");
    assert!(stored.state.is_empty());
    assert_eq!(stored.summaries.len(), 1);
}
