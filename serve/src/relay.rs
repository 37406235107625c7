//! In a deployment whose hosts share one store ([`agent_host::state::shared`]), the events a host
//! emits for a session go to the shared log, where any host's streams read them: queued
//! here without waiting, written by one thread in batches (a streamed reply's deltas
//! would otherwise cost a transaction each), and flushed before the host lets a session go,
//! so the next host's events follow this one's. The numbers the log gave each batch come
//! back, and the events go to this host's own streams with them ([`Wakers::appended`]):
//! a stream never reads back what its own host wrote.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_host::state::SessionStore;
use agent_host::state::shared::Appended;
use agent_host::unpoisoned::LockUnpoisoned as _;

use super::wakers::Wakers;

/// Events one transaction writes at most.
const BATCH: usize = 512;

/// How long a relay whose last append held several sessions waits for more events before
/// the next: under load an append's cost is mostly its own (a call, a transaction), not its
/// sessions', so fewer and fuller appends cost the store less (as a database's
/// `commit_delay` does when other transactions are about). A relay writing one session at a
/// time never waits.
const GATHER: Duration = Duration::from_millis(1);

/// The lease a host took on a session (holder token, generation), which its events are
/// fenced by.
pub type Fence = Arc<(String, u64)>;

enum Record {
    Event {
        session: Arc<str>,
        fence: Fence,
        kind: Arc<str>,
        json: Arc<str>,
        views: Option<String>,
    },
    /// Answered once everything queued before it is written (or failed).
    Flush(tokio::sync::oneshot::Sender<()>),
}

pub struct Relay {
    queue: Mutex<Sender<Record>>,
}

impl Relay {
    /// A relay writing to `store`'s shared log, keeping at least the newest `keep` events of
    /// each session there, and handing what it wrote to `wakers`; `None` when the store has no
    /// shared log.
    pub fn start(store: Arc<dyn SessionStore>, keep: usize, wakers: Arc<Wakers>) -> Option<Arc<Self>> {
        store.shared()?;
        let (queue, records) = channel();
        std::thread::Builder::new()
            .name("event-relay".into())
            .spawn(move || write(&*store, &records, keep, &wakers))
            .map_err(|error| tracing::warn!("cannot start the event relay: {error}"))
            .ok()?;
        Some(Arc::new(Self { queue: Mutex::new(queue) }))
    }

    /// Queues one event of `session`, emitted under `fence`; `views` (JSON), when the event
    /// changed them.
    pub fn send(
        &self,
        session: Arc<str>,
        fence: Fence,
        kind: Arc<str>,
        json: Arc<str>,
        views: Option<String>,
    ) {
        self.push(Record::Event { session, fence, kind, json, views });
    }

    /// Waits until every event queued so far is in the log (or failed to be written).
    pub async fn flush(&self) {
        let (done, written) = tokio::sync::oneshot::channel();
        self.push(Record::Flush(done));
        let _ = written.await;
    }

    fn push(&self, record: Record) {
        let _ = self.queue.lock_unpoisoned().send(record);
    }
}

/// Writes what is queued, a batch at a time, until every sender is gone.
fn write(store: &dyn SessionStore, records: &Receiver<Record>, keep: usize, wakers: &Wakers) {
    let Some(log) = store.shared() else { return };
    let mut gather = None;
    while let Ok(first) = records.recv() {
        let taken = take(records, first, gather);
        let mut flushes = Vec::new();
        let groups = groups(taken, &mut flushes);
        gather = (groups.len() > 1).then_some(GATHER);
        if !groups.is_empty() {
            let batches: Vec<Appended> = groups.iter().map(Group::appended).collect();
            wakers.appending(groups.iter().map(|group| &*group.session));
            let appended = log.append(&batches, keep);
            let priors = appended.as_ref().map_or_else(|_| vec![None; groups.len()], Clone::clone);
            for (group, prior) in groups.into_iter().zip(priors) {
                wakers.appended(&group.session, prior, group.events);
            }
            match appended {
                Ok(priors) => {
                    let fenced = priors.iter().filter(|prior| prior.is_none()).count();
                    if fenced > 0 {
                        tracing::warn!(
                            "{fenced} sessions' events were not written: another host took them over"
                        )
                    }
                }
                // The steps are the record; a stream that missed these events is told of a gap.
                Err(error) => {
                    tracing::warn!(
                        "cannot write {} sessions' events to the shared log: {error}",
                        batches.len()
                    )
                }
            }
        }
        for flush in flushes {
            let _ = flush.send(());
        }
    }
}

/// `first` and what else is queued, up to [`BATCH`] records; waiting up to `gather` for more.
fn take(records: &Receiver<Record>, first: Record, gather: Option<Duration>) -> Vec<Record> {
    let mut taken = vec![first];
    let deadline = gather.map(|gather| Instant::now() + gather);
    while taken.len() < BATCH {
        let next = match deadline {
            None => records.try_recv().ok(),
            Some(deadline) => records.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok(),
        };
        match next {
            Some(record) => taken.push(record),
            None => break,
        }
    }
    taken
}

/// One session's events taken in one batch.
struct Group {
    session: Arc<str>,
    fence: Fence,
    /// (type, `--json` object), in the order they came.
    events: Vec<(Arc<str>, Arc<str>)>,
    /// The views the last view change of them left.
    views: Option<String>,
}

impl Group {
    fn appended(&self) -> Appended {
        Appended {
            session: self.session.to_string(),
            events: self.events.iter().map(|(kind, json)| (kind.to_string(), json.to_string())).collect(),
            views: self.views.clone(),
            fence: Some((*self.fence).clone()),
        }
    }
}

/// The events taken, grouped by session in the order each came (a session's own order
/// kept); the flushes put aside.
fn groups(records: Vec<Record>, flushes: &mut Vec<tokio::sync::oneshot::Sender<()>>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<Arc<str>, usize> = HashMap::new();
    for record in records {
        match record {
            Record::Flush(flush) => flushes.push(flush),
            Record::Event { session, fence, kind, json, views } => {
                let at = *index.entry(session.clone()).or_insert_with(|| {
                    groups.push(Group { session, fence, events: Vec::new(), views: None });
                    groups.len() - 1
                });
                let group = &mut groups[at];
                group.events.push((kind, json));
                if views.is_some() {
                    group.views = views;
                }
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(session: &str, n: u32, views: Option<&str>) -> Record {
        Record::Event {
            session: session.into(),
            fence: Arc::new(("t".to_owned(), 1)),
            kind: "note".into(),
            json: n.to_string().into(),
            views: views.map(str::to_owned),
        }
    }

    #[test]
    fn what_is_queued_is_taken_at_once_and_a_gathering_take_waits_for_more() {
        let (queue, records) = channel();
        for n in 0..3 {
            queue.send(event("a", n, None)).unwrap();
        }
        let first = records.recv().unwrap();
        assert_eq!(take(&records, first, None).len(), 3, "what was queued, nothing waited for");
        // Gathering for longer than the test may take: the take ends when the batch is full,
        // with what another thread sent after it began.
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            for n in 0..BATCH as u32 {
                queue.send(event("b", n, None)).unwrap();
            }
        });
        let first = event("b", 0, None);
        assert_eq!(take(&records, first, Some(Duration::from_secs(600))).len(), BATCH);
        sender.join().unwrap();
    }

    #[test]
    fn events_are_grouped_by_session_in_order_with_the_last_views() {
        let (flush, _) = tokio::sync::oneshot::channel();
        let records = vec![
            event("a", 1, Some("v1")),
            event("b", 2, None),
            Record::Flush(flush),
            event("a", 3, None),
            event("a", 4, Some("v4")),
            event("b", 5, None),
        ];
        let mut flushes = Vec::new();
        let batches: Vec<Appended> = groups(records, &mut flushes).iter().map(Group::appended).collect();
        let shown: Vec<(&str, Vec<&str>, Option<&str>)> = batches
            .iter()
            .map(|batch| {
                (
                    batch.session.as_str(),
                    batch.events.iter().map(|(_, json)| json.as_str()).collect(),
                    batch.views.as_deref(),
                )
            })
            .collect();
        assert_eq!(shown, [("a", vec!["1", "3", "4"], Some("v4")), ("b", vec!["2", "5"], None)]);
        assert_eq!(flushes.len(), 1);
    }
}
