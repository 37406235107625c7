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

use agent_host::state::SessionStore;
use agent_host::state::shared::Appended;
use agent_host::unpoisoned::LockUnpoisoned as _;

use super::wakers::Wakers;

/// Events one transaction writes at most.
const BATCH: usize = 512;

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
    while let Ok(first) = records.recv() {
        let mut taken = vec![first];
        while taken.len() < BATCH {
            match records.try_recv() {
                Ok(record) => taken.push(record),
                Err(_) => break,
            }
        }
        let mut flushes = Vec::new();
        let groups = groups(taken, &mut flushes);
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
