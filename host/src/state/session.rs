use super::landing::{Landing, Settle};
use super::lease::LeaseGuard;
use super::store::{SessionStore, Step, StoreError, StoredView, ViewChange};
use super::wait::wait;
use super::{StateBag, StateChange};
use crate::compacted_history::{
    self, CompactedHistory, Compaction, CompactionError, MessageId, Summaries, Viewed,
};
use crate::conversation::{History, Message};
use crate::events::TokenUsage;

/// One conversation as stored: its history, its plugins' state bag, its counters, and what
/// a compaction put in place of part of the history. What is only cached for it in memory
/// is kept beside it by the layer that uses it.
///
/// Changes accumulate in memory and become durable with [`Session::commit`], which the
/// agent loop calls after every step; a new compaction view, with [`Session::compact`].
pub struct Session {
    id: String,
    /// Every message, as stored: a compaction never changes it.
    history: History,
    /// What is sent instead of `history` since a compaction; `None` before any.
    compacted: Option<Compacted>,
    /// Every summary a compaction wrote, sent or not.
    summaries: Summaries,
    bag: StateBag,
    model_calls: u64,
    /// The tokens of every reported model call, stored and pending.
    usage: TokenUsage,
    /// The last reported call: its reply's history position and what it used.
    last_usage: Option<(usize, TokenUsage)>,
    /// What the replies not yet committed used, by history position.
    pending_usage: Vec<(usize, TokenUsage)>,
    /// How much of `history` the store already has.
    persisted: usize,
    /// The model-call count the store already has.
    persisted_model_calls: u64,
    resumed: bool,
    /// This process's lease on the session; released when the session is dropped.
    lease: LeaseGuard,
}

/// A compaction's view and the messages it sends, kept in step with the history's appends.
struct Compacted {
    view: CompactedHistory,
    generation: u64,
    /// A history of its own, so its revision changes with every new view (a model client's
    /// kept encodings never outlive one) and stays while messages are appended.
    sent: History,
}

/// Why [`Session::compact`] did not commit a view.
#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    #[error("the compaction cannot be used: {0}")]
    Invalid(#[from] CompactionError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Session {
    pub(super) fn new(id: String, lease: LeaseGuard) -> Self {
        Self {
            id,
            history: History::default(),
            compacted: None,
            summaries: Summaries::new(),
            bag: StateBag::default(),
            model_calls: 0,
            usage: TokenUsage::default(),
            last_usage: None,
            pending_usage: Vec::new(),
            persisted: 0,
            persisted_model_calls: 0,
            resumed: false,
            lease,
        }
    }

    /// The stored session, resumed; a view it cannot send is refused as corrupt.
    pub(super) fn resumed(
        id: String,
        stored: super::StoredSession,
        lease: LeaseGuard,
    ) -> Result<Self, StoreError> {
        let compacted = match stored.view {
            Some(StoredView { generation, view }) => {
                let sent =
                    compacted_history::materialize(Some(&view), &stored.history, &stored.summaries).map_err(
                        |error| StoreError::CorruptView { session: id.clone(), detail: error.to_string() },
                    )?;
                Some(Compacted { view, generation, sent: History::from(sent) })
            }
            None => None,
        };
        let persisted = stored.history.len();
        Ok(Self {
            id,
            history: History::from(stored.history),
            compacted,
            summaries: stored.summaries,
            bag: StateBag::from_entries(stored.state),
            model_calls: stored.model_calls,
            usage: stored.usage,
            last_usage: stored.reply_usage.last().copied(),
            pending_usage: Vec::new(),
            persisted,
            persisted_model_calls: stored.model_calls,
            resumed: true,
            lease,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The lease this process took on the session, which its writes are fenced by.
    pub fn fence(&self) -> super::lease::Fence<'_> {
        self.lease.fence()
    }

    /// Every message of the session, as stored; see [`Session::to_send`] for what a model
    /// call is sent.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The messages a model call is sent: the compaction view's, or the whole history
    /// before any compaction. Its revision changes whenever the view does.
    pub fn to_send(&self) -> &History {
        self.compacted.as_ref().map_or(&self.history, |compacted| &compacted.sent)
    }

    /// [`Session::to_send`]'s messages with the ids a compaction names them by.
    pub fn viewed(&self) -> Vec<Viewed<'_>> {
        compacted_history::viewed(self.view(), &self.history, &self.summaries)
            .expect("a session's view was checked against its history when it was made or loaded")
    }

    /// The compaction view, if there has been a compaction.
    pub fn view(&self) -> Option<&CompactedHistory> {
        self.compacted.as_ref().map(|compacted| &compacted.view)
    }

    pub fn summaries(&self) -> &Summaries {
        &self.summaries
    }

    pub fn bag(&self) -> &StateBag {
        &self.bag
    }

    pub fn model_calls(&self) -> u64 {
        self.model_calls
    }

    /// The tokens this session's model calls used, as far as their endpoints reported.
    pub fn usage(&self) -> TokenUsage {
        self.usage
    }

    /// The last model call whose endpoint reported its usage: the history position of its
    /// reply (so the request was the history before it) and what it used.
    pub fn last_usage(&self) -> Option<(usize, TokenUsage)> {
        self.last_usage
    }

    /// Whether this session existed before this process opened it.
    pub fn was_resumed(&self) -> bool {
        self.resumed
    }

    /// Whether nothing has happened in this session yet.
    pub fn is_empty(&self) -> bool {
        self.history.is_empty()
    }

    pub fn push(&mut self, message: Message) {
        if let Some(compacted) = &mut self.compacted {
            compacted.sent.push(message.clone());
        }
        self.history.push(message);
    }

    /// Appends a model reply with what its call used (stored beside it, never in it).
    pub fn push_reply(&mut self, message: Message, usage: Option<TokenUsage>) {
        if let Some(usage) = usage {
            self.pending_usage.push((self.history.len(), usage));
            self.usage = self.usage.plus(usage);
            self.last_usage = Some((self.history.len(), usage));
        }
        self.push(message);
    }

    pub fn count_model_call(&mut self) {
        self.model_calls += 1;
    }

    /// Makes everything since the last commit durable, in one transaction; nothing at all
    /// when nothing changed. On failure the changes stay pending and the next commit
    /// retries them.
    pub fn commit(&mut self, store: &dyn SessionStore) -> Result<(), StoreError> {
        wait(self.commit_async(store))
    }

    /// [`Session::commit`], awaited ([`SessionStore::commit_async`]): what a turn calls, so
    /// that its thread serves other sessions while the store makes the step durable. A
    /// caller that stops awaiting still has the step settled (`state/landing.rs`).
    pub async fn commit_async(&mut self, store: &dyn SessionStore) -> Result<(), StoreError> {
        let usage = self.pending_usage.clone();
        let changes = self.bag.take_changes();
        let Some((id, step, books)) = self.step(&changes, &usage, None) else { return Ok(()) };
        Landing::new(store.commit_async(id, step), books).await
    }

    /// Replaces what is sent by `compaction` of it (see [`compacted_history::check`], which it must
    /// pass), and makes the new view durable together with everything else pending, in one
    /// transaction. On any failure nothing changes: the old view stays, in memory and in the
    /// store. The new summaries' ids, in order.
    pub fn compact(
        &mut self,
        store: &dyn SessionStore,
        compaction: Compaction,
    ) -> Result<Vec<MessageId>, CompactError> {
        wait(self.compact_async(store, compaction))
    }

    /// [`Session::compact`], awaited, as [`Session::commit_async`] is.
    pub async fn compact_async(
        &mut self,
        store: &dyn SessionStore,
        compaction: Compaction,
    ) -> Result<Vec<MessageId>, CompactError> {
        let new = self.compacted(compaction)?;
        let usage = self.pending_usage.clone();
        let changes = self.bag.take_changes();
        let Some((id, step, books)) = self.step(&changes, &usage, Some(&new)) else {
            unreachable!("a step with a view is never empty")
        };
        Landing::new(store.commit_async(id, step), books).await?;
        Ok(new.ids())
    }

    /// The view `compaction` makes of what is sent now, checked.
    fn compacted(&self, compaction: Compaction) -> Result<NewView, CompactError> {
        compacted_history::check(&self.viewed(), &compaction)?;
        let next_summary = self.summaries.last_key_value().map_or(1, |(number, _)| number + 1);
        let (view, added) = compacted_history::apply(self.view(), compaction, next_summary);
        let generation = self.compacted.as_ref().map_or(0, |compacted| compacted.generation) + 1;
        let mut summaries = self.summaries.clone();
        summaries.extend(added.iter().cloned());
        let sent = compacted_history::materialize(Some(&view), &self.history, &summaries)?;
        Ok(NewView { view, generation, added, summaries, sent })
    }

    /// The step of everything since the last commit (`changes` taken from the bag, `usage` a
    /// copy of the pending usage) with `view`, and the books its answer settles; `None` when
    /// nothing changed.
    fn step<'s>(
        &'s mut self,
        changes: &'s [StateChange],
        usage: &'s [(usize, TokenUsage)],
        view: Option<&'s NewView>,
    ) -> Option<(&'s str, Step<'s>, Books<'s>)> {
        let Self {
            id,
            history,
            compacted,
            summaries,
            bag,
            model_calls,
            pending_usage,
            persisted,
            persisted_model_calls,
            lease,
            ..
        } = self;
        if view.is_none()
            && changes.is_empty()
            && *persisted == history.len()
            && *persisted_model_calls == *model_calls
        {
            return None;
        }
        let step = Step {
            lease: Some(lease.fence()),
            first_seq: *persisted,
            messages: &history[*persisted..],
            usage,
            changes,
            model_calls: *model_calls,
            view: view.map(|new| ViewChange {
                generation: new.generation,
                view: &new.view,
                summaries: &new.added,
            }),
        };
        let books = Books {
            written: (history.len(), *model_calls),
            persisted,
            persisted_model_calls,
            pending_usage,
            bag,
            changes,
            view: view.map(|new| (compacted, summaries, new)),
        };
        Some((id, step, books))
    }
}

/// A compaction's view, before it is the session's.
struct NewView {
    view: CompactedHistory,
    generation: u64,
    /// The summaries it adds.
    added: Vec<(u64, Message)>,
    /// Every summary, with those.
    summaries: Summaries,
    /// What it sends.
    sent: Vec<Message>,
}

impl NewView {
    fn ids(&self) -> Vec<MessageId> {
        self.added.iter().map(|(number, _)| MessageId::Summary(*number)).collect()
    }
}

/// What a commit's answer changes in its session: on success, how much the store has (and a
/// compaction's view becomes the session's); on failure, the bag's changes pending again so
/// that the next commit retries them.
struct Books<'s> {
    /// The history's length and the model-call count the step writes.
    written: (usize, u64),
    persisted: &'s mut usize,
    persisted_model_calls: &'s mut u64,
    pending_usage: &'s mut Vec<(usize, TokenUsage)>,
    bag: &'s StateBag,
    changes: &'s [StateChange],
    view: Option<(&'s mut Option<Compacted>, &'s mut Summaries, &'s NewView)>,
}

impl Settle for Books<'_> {
    fn settle(&mut self, outcome: &Result<(), StoreError>) {
        if outcome.is_err() {
            self.bag.restore_changes(self.changes);
            return;
        }
        (*self.persisted, *self.persisted_model_calls) = self.written;
        self.pending_usage.clear();
        if let Some((compacted, summaries, new)) = &mut self.view {
            **summaries = new.summaries.clone();
            **compacted = Some(Compacted {
                view: new.view.clone(),
                generation: new.generation,
                sent: History::from(new.sent.clone()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::compacted_history::{Replacement, truncate};
    use crate::state::test_stores::{TestDatabase, both_stores};
    use crate::state::{Sessions, SqliteStore};
    use crate::tools::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "notes_add".into(), arguments: "{}".into() }
    }

    both_stores!(
        a_compaction_changes_what_is_sent_never_what_is_kept_and_a_resume_sends_the_same,
        a_later_compaction_replaces_the_view_and_may_keep_an_earlier_summary,
        a_compaction_that_fails_its_checks_or_its_commit_changes_nothing,
        a_fork_copies_history_bag_and_view_and_leaves_the_source_as_it_was,
        truncation_of_a_session_passes_the_checks_the_session_applies,
        a_commit_whose_caller_stops_awaiting_it_lands_and_the_session_knows,
    );

    fn sessions(db: &TestDatabase) -> Sessions {
        Sessions::new(db.open())
    }

    /// For the kill test, which stops SQLite's commit half-way.
    fn sqlite_sessions(path: &Path) -> Sessions {
        Sessions::new(Arc::new(SqliteStore::open(path).unwrap()))
    }

    fn contents(messages: &History) -> Vec<&str> {
        messages.iter().map(|message| message.content.as_str()).collect()
    }

    /// A committed session of two turns, the first with a tool call: #0 user, #1 assistant
    /// calling c1, #2 its result, #3 assistant, #4 user, #5 assistant.
    fn two_turns(sessions: &Sessions) -> String {
        let handle = sessions.create().unwrap();
        let mut session = handle.try_lock().unwrap();
        session.push(Message::user("first"));
        session.push_reply(Message::assistant("calling", vec![call("c1")]), None);
        session.push(Message::tool("c1", "result"));
        session.push_reply(Message::assistant("done", vec![]), None);
        session.push(Message::user("second"));
        session.push_reply(Message::assistant("ok", vec![]), None);
        session.commit(&**sessions.store()).unwrap();
        session.id().to_owned()
    }

    fn summary_of_the_call() -> Compaction {
        Compaction {
            replaces: 4,
            entries: vec![
                Replacement::Keep(MessageId::Message(0)),
                Replacement::Summary(Message::system("a note was added")),
            ],
        }
    }

    fn a_compaction_changes_what_is_sent_never_what_is_kept_and_a_resume_sends_the_same(db: &TestDatabase) {
        let sessions = sessions(db);
        let id = two_turns(&sessions);
        let handle = sessions.open(&id).unwrap().unwrap();
        let mut session = handle.try_lock().unwrap();
        let before = session.to_send().revision();
        let added = session.compact(&**sessions.store(), summary_of_the_call()).unwrap();
        assert_eq!(added, [MessageId::Summary(1)]);
        assert_eq!(contents(session.to_send()), ["first", "a note was added", "second", "ok"]);
        assert_ne!(
            session.to_send().revision(),
            before,
            "kept encodings of the old messages must not be reused"
        );
        assert_eq!(session.history().len(), 6, "every original message stays");
        let compacted = session.to_send().revision();
        session.push(Message::user("third"));
        assert_eq!(session.to_send().revision(), compacted, "an append keeps the revision");
        assert_eq!(contents(session.to_send()).last(), Some(&"third"));
        session.commit(&**sessions.store()).unwrap();
        let sent: Vec<Message> = session.to_send().to_vec();
        drop(session);
        drop(handle);

        let stored = db.open().load(&id).unwrap().unwrap();
        assert_eq!(stored.history.len(), 7);
        assert_eq!(stored.view.as_ref().map(|view| view.generation), Some(1));
        let reopened = self::sessions(db);
        let handle = reopened.open(&id).unwrap().unwrap();
        let session = handle.try_lock().unwrap();
        assert_eq!(session.to_send()[..], sent[..], "a resume sends the compacted view");
        assert_eq!(session.summaries().len(), 1);
    }

    fn a_later_compaction_replaces_the_view_and_may_keep_an_earlier_summary(db: &TestDatabase) {
        let sessions = sessions(db);
        let id = two_turns(&sessions);
        let handle = sessions.open(&id).unwrap().unwrap();
        let mut session = handle.try_lock().unwrap();
        session.compact(&**sessions.store(), summary_of_the_call()).unwrap();
        let first = session.to_send().revision();
        // Sent: #0, summary 1, #4, #5. Replace #0 and summary 1 by summary 1 and a new one.
        let second = Compaction {
            replaces: 2,
            entries: vec![
                Replacement::Keep(MessageId::Summary(1)),
                Replacement::Summary(Message::system("the first prompt, summarised")),
            ],
        };
        assert_eq!(session.compact(&**sessions.store(), second).unwrap(), [MessageId::Summary(2)]);
        assert_ne!(session.to_send().revision(), first);
        assert_eq!(
            contents(session.to_send()),
            ["a note was added", "the first prompt, summarised", "second", "ok"]
        );
        let stored = sessions.store().load(&id).unwrap().unwrap();
        let view = stored.view.unwrap();
        assert_eq!(view.generation, 2);
        assert_eq!(view.view.entries, [MessageId::Summary(1), MessageId::Summary(2)]);
        assert_eq!(stored.summaries.len(), 2, "summaries stay, sent or not");
    }

    fn a_compaction_that_fails_its_checks_or_its_commit_changes_nothing(db: &TestDatabase) {
        let sessions = sessions(db);
        let id = two_turns(&sessions);
        let handle = sessions.open(&id).unwrap().unwrap();
        let mut session = handle.try_lock().unwrap();
        let splits = Compaction { replaces: 2, entries: vec![Replacement::Keep(MessageId::Message(0))] };
        let error = session.compact(&**sessions.store(), splits).unwrap_err();
        assert!(matches!(&error, CompactError::Invalid(CompactionError::CallDropped { .. })), "{error}");
        assert!(session.view().is_none());

        // Another writer takes the lease: the commit fails, and the view stays the old one.
        session.push(Message::user("pending"));
        let other = crate::state::lease::Holder::this_process();
        let token = session.lease.fence().token.to_owned();
        let taken = sessions.store().lease(&id, &other, "taken", i64::MAX, Some(&token)).unwrap();
        assert!(matches!(taken, crate::state::lease::LeaseAnswer::Taken(_)), "{taken:?}");
        let revision = session.to_send().revision();
        let error = session.compact(&**sessions.store(), summary_of_the_call()).unwrap_err();
        assert!(matches!(&error, CompactError::Store(StoreError::LeaseLost { .. })), "{error}");
        assert!(session.view().is_none() && session.summaries().is_empty());
        assert_eq!(session.to_send().revision(), revision);
        assert_eq!(contents(session.to_send()).len(), 7);
        let stored = sessions.store().load(&id).unwrap().unwrap();
        assert!(stored.view.is_none() && stored.summaries.is_empty() && stored.history.len() == 6);
    }

    fn a_fork_copies_history_bag_and_view_and_leaves_the_source_as_it_was(db: &TestDatabase) {
        let sessions = sessions(db);
        let id = two_turns(&sessions);
        {
            let handle = sessions.open(&id).unwrap().unwrap();
            let mut session = handle.try_lock().unwrap();
            session.bag().put("planner", "list", Some(r#"[{"title":"ship"}]"#.into()));
            session.compact(&**sessions.store(), summary_of_the_call()).unwrap();
        }
        let source = sessions.store().load(&id).unwrap().unwrap();
        let fork = sessions.fork(&id).unwrap().unwrap();
        let mut fork = fork.try_lock().unwrap();
        assert_ne!(fork.id(), id);
        assert_eq!(fork.bag().get("planner", "list").as_deref(), Some(r#"[{"title":"ship"}]"#));
        assert_eq!(contents(fork.to_send()), ["first", "a note was added", "second", "ok"]);
        assert_eq!(sessions.store().load(fork.id()).unwrap().unwrap(), source, "the copy is whole");
        fork.push(Message::user("only in the fork"));
        fork.bag().put("planner", "list", Some("[]".into()));
        fork.commit(&**sessions.store()).unwrap();
        assert_eq!(sessions.store().load(&id).unwrap().unwrap(), source, "the source is untouched");
        assert!(sessions.fork("no-such-session").unwrap().is_none());
    }

    fn truncation_of_a_session_passes_the_checks_the_session_applies(db: &TestDatabase) {
        let sessions = sessions(db);
        let id = two_turns(&sessions);
        let handle = sessions.open(&id).unwrap().unwrap();
        let mut session = handle.try_lock().unwrap();
        // 30 bytes of content; down to 15 takes the call with its result (13), then "done" (4).
        let viewed = session.viewed();
        let sizes: Vec<usize> = viewed.iter().map(|viewed| viewed.message.content.len()).collect();
        let truncation = truncate(&viewed, &sizes, 15, &[]);
        assert_eq!(truncation.dropped, [MessageId::Message(1), MessageId::Message(2), MessageId::Message(3)]);
        session.compact(&**sessions.store(), truncation.compaction).unwrap();
        assert_eq!(contents(session.to_send()), ["first", "second", "ok"]);
    }

    /// A turn dropped while its step's commit is in flight (Ctrl-C, a cancel over HTTP): the
    /// future is polled once and dropped. The step lands, the session counts it as written,
    /// and its next commit appends after it rather than sending it again (which the store
    /// would refuse: its positions are taken).
    fn a_commit_whose_caller_stops_awaiting_it_lands_and_the_session_knows(db: &TestDatabase) {
        use futures_util::FutureExt as _;
        let sessions = sessions(db);
        let handle = sessions.create().unwrap();
        let mut session = handle.try_lock().unwrap();
        session.push(Message::user("first"));
        session.bag().put("notes", "k", Some("1".into()));
        let store = sessions.store().clone();
        // PostgreSQL answers after a round trip, so the one poll leaves it in flight.
        let answered = session.commit_async(&*store).now_or_never();
        if matches!(db, TestDatabase::Postgres { .. }) {
            assert!(answered.is_none(), "in flight when dropped");
        }
        let stored = db.open().load(session.id()).unwrap().unwrap();
        assert_eq!(contents(&History::from(stored.history)), ["first"]);
        assert_eq!(stored.state, [("notes".to_owned(), "k".to_owned(), "1".to_owned())]);
        session.push(Message::user("second"));
        session.commit(&*store).unwrap();
        let stored = db.open().load(session.id()).unwrap().unwrap();
        assert_eq!(contents(&History::from(stored.history)), ["first", "second"]);
    }

    /// The test databases of the kill test, and where the child says it stopped.
    const DB_VAR: &str = "AGENT_HOST_TEST_KILL_DB";
    const SESSION_VAR: &str = "AGENT_HOST_TEST_KILL_SESSION";

    /// Run by [`a_kill_in_the_middle_of_committing_a_view_leaves_the_old_view_or_the_new`] as
    /// a child process: compacts the session further (stalling in the commit when told).
    #[test]
    #[ignore = "a child process of the kill test; does nothing on its own"]
    fn compacting_child() {
        let (Ok(path), Ok(id)) = (std::env::var(DB_VAR), std::env::var(SESSION_VAR)) else { return };
        let sessions = sqlite_sessions(Path::new(&path));
        let handle = sessions.open(&id).unwrap().unwrap();
        let mut session = handle.try_lock().unwrap();
        session.push(Message::user("pending in the same step"));
        let second = Compaction {
            replaces: 2,
            entries: vec![Replacement::Summary(Message::system("the second view's summary"))],
        };
        session.compact(&**sessions.store(), second).unwrap();
    }

    /// Runs [`compacting_child`] on `path`; with `stall_at`, kills it with SIGKILL once it has
    /// stopped at that point of its commit.
    fn run_child(path: &Path, id: &str, stall_at: Option<&str>) {
        let marker = path.with_extension("stalled");
        let _ = std::fs::remove_file(&marker);
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", "state::session::tests::compacting_child", "--ignored", "--nocapture"])
            .env(DB_VAR, path)
            .env(SESSION_VAR, id)
            .env("AGENT_HOST_TEST_STALLED", &marker)
            .stdout(std::process::Stdio::null());
        if let Some(point) = stall_at {
            command.env("AGENT_HOST_TEST_STALL_AT", point);
        }
        let mut child = command.spawn().unwrap();
        let Some(point) = stall_at else {
            assert!(child.wait().unwrap().success(), "the child commits its view");
            return;
        };
        while !marker.exists() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("the child ended ({status}) before it reached {point}");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(std::fs::read_to_string(&marker).unwrap(), point);
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn a_kill_in_the_middle_of_committing_a_view_leaves_the_old_view_or_the_new() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let id = {
            let sessions = sqlite_sessions(&path);
            let id = two_turns(&sessions);
            let handle = sessions.open(&id).unwrap().unwrap();
            handle.try_lock().unwrap().compact(&**sessions.store(), summary_of_the_call()).unwrap();
            id
        };
        let old = SqliteStore::open(&path).unwrap().load(&id).unwrap().unwrap();
        for point in ["view-summaries-written", "view-written"] {
            run_child(&path, &id, Some(point));
            // The killed child's lease is taken over at once: its process is gone.
            let sessions = sqlite_sessions(&path);
            let handle = sessions.open(&id).unwrap().unwrap();
            assert_eq!(
                sessions.store().load(&id).unwrap().unwrap(),
                old,
                "killed at {point}: the old view, summaries and history, none of the step"
            );
            assert_eq!(
                contents(handle.try_lock().unwrap().to_send()),
                ["first", "a note was added", "second", "ok"]
            );
        }
        run_child(&path, &id, None);
        let sessions = sqlite_sessions(&path);
        let handle = sessions.open(&id).unwrap().unwrap();
        let session = handle.try_lock().unwrap();
        assert_eq!(session.view().map(|view| view.covers), Some(4));
        assert_eq!(
            contents(session.to_send()),
            ["the second view's summary", "second", "ok", "pending in the same step"]
        );
        let stored = sessions.store().load(&id).unwrap().unwrap();
        assert_eq!(
            (stored.view.unwrap().generation, stored.summaries.len(), stored.history.len()),
            (2, 2, 7)
        );
    }
}
