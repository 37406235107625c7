//! One session's event stream over HTTP: every event numbered, the last `capacity` kept
//! for clients that reconnect with `Last-Event-ID`, and each sent live to every open stream.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use crate::events::{Event, EventSink};

/// One numbered event, as the JSON line `--json` writes.
#[derive(Debug, Clone)]
pub struct Numbered {
    pub id: u64,
    pub kind: Arc<str>,
    pub json: Arc<str>,
}

pub struct Hub {
    kept: Mutex<Kept>,
    live: broadcast::Sender<Numbered>,
}

struct Kept {
    next: u64,
    capacity: usize,
    events: VecDeque<Numbered>,
}

/// What a (re)connecting client is sent first, and where the live part takes over.
pub struct Replay {
    pub missed: Vec<Numbered>,
    /// Events the client asked for that are no longer kept, if any: the oldest kept id.
    pub gap_before: Option<u64>,
    pub live: broadcast::Receiver<Numbered>,
}

impl Hub {
    pub fn new(capacity: usize) -> Self {
        // A stream that falls this far behind is closed, and reconnects from what is kept.
        let (live, _) = broadcast::channel(capacity.clamp(16, 4096));
        Self { kept: Mutex::new(Kept { next: 1, capacity, events: VecDeque::new() }), live }
    }

    /// The kept events after `last_seen` (all kept ones without it), and a receiver for
    /// those that follow, taken together so that none falls between them.
    pub fn replay(&self, last_seen: Option<u64>) -> Replay {
        let kept = self.lock();
        let live = self.live.subscribe();
        let after = last_seen.unwrap_or(0);
        let missed: Vec<Numbered> = kept.events.iter().filter(|event| event.id > after).cloned().collect();
        let oldest = kept.events.front().map_or(kept.next, |event| event.id);
        let gap_before = (last_seen.is_some() && after + 1 < oldest).then_some(oldest);
        Replay { missed, gap_before, live }
    }

    /// Streams open on this hub now.
    pub fn streams(&self) -> usize {
        self.live.receiver_count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl EventSink for Hub {
    fn emit(&self, event: &Event) {
        let json = serde_json::to_value(event).expect("events serialize");
        let kind: Arc<str> = json["type"].as_str().unwrap_or("event").into();
        let mut kept = self.lock();
        let numbered = Numbered { id: kept.next, kind, json: json.to_string().into() };
        kept.next += 1;
        if kept.events.len() == kept.capacity {
            kept.events.pop_front();
        }
        kept.events.push_back(numbered.clone());
        // Sent under the lock, so a stream sees events in the order they are numbered.
        let _ = self.live.send(numbered);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(n: u64) -> Event {
        Event::Error { message: format!("e{n}"), plugin: None }
    }

    #[test]
    fn a_reconnect_gets_what_it_missed_and_is_told_of_what_is_no_longer_kept() {
        let hub = Hub::new(3);
        for n in 1..=5 {
            hub.emit(&error(n));
        }
        let replay = hub.replay(Some(3));
        assert_eq!(replay.missed.iter().map(|e| e.id).collect::<Vec<_>>(), [4, 5]);
        assert_eq!(replay.gap_before, None);
        let replay = hub.replay(Some(1));
        assert_eq!(replay.missed.iter().map(|e| e.id).collect::<Vec<_>>(), [3, 4, 5]);
        assert_eq!(replay.gap_before, Some(3), "event 2 is gone");
        assert!(replay.missed[0].json.contains("\"e3\"") && &*replay.missed[0].kind == "error");
    }

    #[tokio::test]
    async fn what_follows_a_replay_arrives_live_in_order() {
        let hub = Hub::new(10);
        hub.emit(&error(1));
        let mut replay = hub.replay(None);
        hub.emit(&error(2));
        assert_eq!(replay.missed.len(), 1);
        assert_eq!(replay.live.recv().await.unwrap().id, 2);
    }
}
