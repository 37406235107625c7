//! A session's event stream where hosts share the store: read from the shared log, so a
//! stream on any host sees the events of a turn that runs on another, and an id is the
//! event's number in the session (`log-N`), the same on every host and across restarts.
//! What this host appended itself comes from memory ([`Wakers::since`]); the log is read
//! for the rest: when a notice says the session moved past what is held here, when the host
//! listens again after a lost connection, and every half minute regardless.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::Event as SseEvent;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use agent_host::state::SessionStore;
use agent_host::state::shared::LogPage;

use super::kept_events::Numbered;
use super::wakers::{Since, Wakers};

/// How often a stream reads the log with no notice that it moved: a safety net only, since
/// a lost connection wakes every stream when it is made again.
const POLL: Duration = Duration::from_secs(30);

/// Events read from the log at once.
const PAGE: usize = 256;

const PREFIX: &str = "log-";

/// Where a (re)connecting client is, from its `Last-Event-ID`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    /// No id: everything kept.
    Start,
    /// After this number.
    After(u64),
    /// An id that is not of this log (an older server's, say): a gap, then everything kept.
    Elsewhere,
}

impl From {
    pub fn parse(last_event_id: Option<&str>) -> Self {
        match last_event_id.map(str::trim) {
            None => Self::Start,
            Some(text) => match text.strip_prefix(PREFIX).and_then(|n| n.parse().ok()) {
                Some(n) => Self::After(n),
                None => Self::Elsewhere,
            },
        }
    }
}

/// The id of event `seq`.
pub fn event_id(seq: u64) -> String {
    format!("{PREFIX}{seq}")
}

pub struct LogStream {
    store: Arc<dyn SessionStore>,
    wakers: Arc<Wakers>,
    session: String,
    from: From,
    after: u64,
    first: bool,
    /// Read the log at the next turn: the last read filled a page, or the poll came due.
    read_again: bool,
    ready: VecDeque<SseEvent>,
    moved: watch::Receiver<u64>,
    /// The times the log may have moved unseen, as of the last look.
    unseen: u64,
    shutdown: CancellationToken,
}

impl LogStream {
    pub fn new(
        store: Arc<dyn SessionStore>,
        wakers: Arc<Wakers>,
        session: String,
        from: From,
        shutdown: CancellationToken,
    ) -> Self {
        let after = match from {
            From::After(n) => n,
            From::Start | From::Elsewhere => 0,
        };
        // Followed before the first read: whatever moves after it is told.
        let moved = wakers.follow_log(&session);
        let unseen = *moved.borrow();
        Self {
            store,
            wakers,
            session,
            from,
            after,
            first: true,
            read_again: false,
            ready: VecDeque::new(),
            moved,
            unseen,
            shutdown,
        }
    }

    /// The next event to send; `None` when the server shuts down.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            // Marked seen before looking: a move meanwhile wakes the next wait.
            let unseen = *self.moved.borrow_and_update();
            let mut read = self.first || std::mem::take(&mut self.read_again) || unseen != self.unseen;
            self.unseen = unseen;
            if !read {
                match self.wakers.since(&self.session, self.after) {
                    Since::Events(events) => self.take_held(events),
                    Since::Nothing => {}
                    Since::Read => read = true,
                }
            }
            if read {
                match self.read().await {
                    Ok(page) => self.take(page),
                    Err(error) => {
                        tracing::warn!(session = self.session, "cannot read the shared event log: {error}")
                    }
                }
            }
            if !self.ready.is_empty() {
                continue;
            }
            tokio::select! {
                _ = self.moved.changed() => {}
                () = tokio::time::sleep(POLL) => self.read_again = true,
                () = self.shutdown.cancelled() => return None,
            }
        }
    }

    async fn read(&self) -> Result<LogPage, String> {
        let (store, session, after) = (self.store.clone(), self.session.clone(), self.after);
        let read = tokio::task::spawn_blocking(move || {
            let log = store.shared().ok_or("the store has no shared log")?;
            log.events_after(&session, after, PAGE).map_err(|error| error.to_string())
        });
        read.await.map_err(|error| error.to_string())?
    }

    fn take(&mut self, page: LogPage) {
        if std::mem::take(&mut self.first) {
            let gap = match self.from {
                From::Start => None,
                From::After(n) => page.oldest_kept.filter(|oldest| *oldest > n + 1),
                From::Elsewhere => Some(page.oldest_kept.unwrap_or(1)),
            };
            if let Some(oldest) = gap {
                let gap = serde_json::json!({ "type": "gap", "oldest_kept": oldest });
                self.ready.push_back(SseEvent::default().event("gap").data(gap.to_string()));
            }
        }
        self.read_again = page.events.len() == PAGE;
        for event in page.events {
            self.after = event.seq;
            self.ready
                .push_back(SseEvent::default().id(event_id(event.seq)).event(event.kind).data(event.json));
        }
    }

    fn take_held(&mut self, events: Vec<Numbered>) {
        for event in events {
            self.after = event.id;
            self.ready
                .push_back(SseEvent::default().id(event_id(event.id)).event(&*event.kind).data(&*event.json));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_of_the_log_resumes_after_its_number_and_any_other_is_elsewhere() {
        assert_eq!(From::parse(None), From::Start);
        assert_eq!(From::parse(Some("log-17")), From::After(17));
        assert_eq!(From::parse(Some(&event_id(3))), From::After(3));
        for other in ["3", "ab12cd34-3", "log-", "log-x", "log--1"] {
            assert_eq!(From::parse(Some(other)), From::Elsewhere, "{other}");
        }
    }
}
