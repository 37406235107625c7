use std::io::Write;

use crate::events::{Event, EventSink};

/// Writes each event as one JSON line on stdout, flushed, so a reader sees it at once.
pub struct JsonLines;

impl EventSink for JsonLines {
    fn emit(&self, event: &Event) {
        let mut stdout = std::io::stdout().lock();
        let line = serde_json::to_string(event).expect("events always serialize");
        // A closed stdout (the reader went away) must not take the session down.
        let _ = writeln!(stdout, "{line}");
        let _ = stdout.flush();
    }
}
