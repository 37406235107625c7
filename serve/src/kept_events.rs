//! The newest events of a session kept in memory, at most so many weighing at most so many
//! bytes: a hub's, for clients that reconnect; and, where hosts share the store, those this
//! host appended to a followed session's log, for its streams, which then need not read back
//! what their own host wrote.

use std::collections::VecDeque;
use std::sync::Arc;

/// What one kept event costs beyond its text: the entry and its shared strings' headers.
const EVENT_OVERHEAD: usize = 64;

/// One numbered event, as the JSON line `--json` writes.
#[derive(Debug, Clone)]
pub struct Numbered {
    pub id: u64,
    pub kind: Arc<str>,
    pub json: Arc<str>,
}

impl Numbered {
    fn weight(&self) -> usize {
        self.kind.len() + self.json.len() + EVENT_OVERHEAD
    }
}

pub struct KeptEvents {
    capacity: usize,
    budget: usize,
    bytes: usize,
    events: VecDeque<Numbered>,
}

impl KeptEvents {
    /// At most `capacity` events weighing at most `budget` bytes together.
    pub fn new(capacity: usize, budget: usize) -> Self {
        Self { capacity, budget, bytes: 0, events: VecDeque::new() }
    }

    /// Keeps `event` as the newest, dropping the oldest past either bound. The newest stays
    /// even alone past the budget: a client resuming from the one before it is sent it whole.
    pub fn push(&mut self, event: Numbered) {
        self.bytes += event.weight();
        self.events.push_back(event);
        while self.events.len() > 1 && (self.events.len() > self.capacity || self.bytes > self.budget) {
            let dropped = self.events.pop_front().expect("more than one event is kept");
            self.bytes -= dropped.weight();
        }
    }

    /// The kept events numbered after `id`, oldest first.
    pub fn after(&self, id: u64) -> impl Iterator<Item = &Numbered> {
        // Numbered in order: those after `id` are a tail.
        let skip = self.events.partition_point(|event| event.id <= id);
        self.events.range(skip..)
    }

    pub fn oldest(&self) -> Option<u64> {
        self.events.front().map(|event| event.id)
    }

    pub fn newest(&self) -> Option<u64> {
        self.events.back().map(|event| event.id)
    }

    pub fn clear(&mut self) {
        self.events.clear();
        self.bytes = 0;
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }
}
