//! A plugin command's output, said once. A command answers the operator with text, and the
//! plugin may also emit events while it runs, with a display form for people (`list
//! cleared`). Drawn as they come, the operator would read both: the same news twice. So
//! while a command runs its events' display forms are held back; once it has answered, an
//! answer with text speaks for the command and the events go on without them, and a command
//! that answered nothing (its effect shown some other way) has them drawn after all.

use std::sync::Mutex;

use agent_host::events::{Event, EventSink};
use agent_host::unpoisoned::LockUnpoisoned as _;

/// The front end's sink for the time of one command.
pub struct CommandSink<'a> {
    inner: &'a dyn EventSink,
    /// The events with a display form, in order, not passed on yet.
    held: Mutex<Vec<Event>>,
}

impl<'a> CommandSink<'a> {
    pub fn new(inner: &'a dyn EventSink) -> Self {
        Self { inner, held: Mutex::default() }
    }

    /// The command has answered `answer`: the events held go on, with their display forms
    /// only when it said nothing (an error always says something).
    pub fn answered(self, answer: &Result<String, String>) {
        self.finish(match answer {
            Ok(text) => !text.trim().is_empty(),
            Err(_) => true,
        });
    }

    /// The events held go on, with their display forms only when `answered` is false.
    fn finish(self, answered: bool) {
        for mut event in self.held.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner()) {
            if answered && let Event::Plugin { display, .. } = &mut event {
                *display = None;
            }
            self.inner.emit(&event);
        }
    }
}

impl EventSink for CommandSink<'_> {
    fn emit(&self, event: &Event) {
        match event {
            Event::Plugin { display: Some(_), .. } => self.held.lock_unpoisoned().push(event.clone()),
            _ => self.inner.emit(event),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_host::events::CollectEvents;

    fn plugin_event(display: Option<&str>) -> Event {
        Event::Plugin {
            plugin: "p".into(),
            kind: "k".into(),
            payload: serde_json::value::RawValue::from_string("{}".into()).unwrap().into(),
            display: display.map(Into::into),
        }
    }

    fn displays(events: &[Event]) -> Vec<Option<String>> {
        events
            .iter()
            .filter_map(|event| match event {
                Event::Plugin { display, .. } => Some(display.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_answer_with_text_speaks_for_the_command_and_the_events_go_on_without_display() {
        let collected = CollectEvents::default();
        let sink = CommandSink::new(&collected);
        sink.emit(&plugin_event(Some("list cleared")));
        sink.emit(&plugin_event(None));
        assert_eq!(displays(&collected.take()), [None], "held until the command answers");
        sink.finish(true);
        assert_eq!(displays(&collected.take()), [None]);
    }

    #[test]
    fn a_command_that_answered_nothing_has_its_events_drawn() {
        let collected = CollectEvents::default();
        let sink = CommandSink::new(&collected);
        sink.emit(&plugin_event(Some("switched")));
        sink.finish(false);
        assert_eq!(displays(&collected.take()), [Some("switched".to_owned())]);
    }
}
