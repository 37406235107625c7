//! Where events go: the console, a JSON-lines writer, a test's collector.

use super::Event;
use crate::unpoisoned::LockUnpoisoned as _;

/// Where events go: the console, a JSON-lines writer, a test's collector.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: &Event);
}

/// Drops every event.
pub struct NoEvents;

impl EventSink for NoEvents {
    fn emit(&self, _event: &Event) {}
}

/// Shows plugin build progress on stderr and drops every other event: for the start-up
/// load, before any front end exists.
pub struct BuildProgressOnStderr;

impl EventSink for BuildProgressOnStderr {
    fn emit(&self, event: &Event) {
        if let Event::PluginBuilding { path, progress } = event {
            // Cargo's output passes on what a plugin crate's build script prints.
            let escape = crate::sanitize::one_line;
            eprintln!("  building plugin {}: {}", escape(path), escape(progress));
        }
    }
}

/// Keeps every event, in order (tests and the benches).
#[derive(Default)]
pub struct CollectEvents {
    events: std::sync::Mutex<Vec<Event>>,
}

impl CollectEvents {
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.lock_unpoisoned())
    }
}

impl EventSink for CollectEvents {
    fn emit(&self, event: &Event) {
        self.events.lock_unpoisoned().push(event.clone());
    }
}
