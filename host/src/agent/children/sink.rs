//! A child's events, carried on its parent's stream as `subagent` events.

use crate::events::{Event, EventSink};

/// Wraps each event of one child's turn for the parent's sink.
pub struct ChildSink<'a> {
    pub parent: &'a dyn EventSink,
    pub session_id: String,
    pub parent_id: String,
    pub agent: String,
}

impl EventSink for ChildSink<'_> {
    fn emit(&self, event: &Event) {
        self.parent.emit(&Event::Subagent {
            session_id: self.session_id.clone(),
            parent_id: self.parent_id.clone(),
            agent: self.agent.clone(),
            event: Box::new(event.clone()),
        });
    }
}
