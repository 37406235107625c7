//! What each message of one session's history comes to for a model call, kept from one call
//! to the next: its wire encoding, and its size for the estimate of the request (`tokens`).
//!
//! Every model call sends the whole history, so without them each message would be escaped
//! (and counted) again on every call after it: quadratic in a long session. They are kept
//! beside the history rather than in it, by whoever holds the session (the agent's live
//! session), and are keyed by the history's [`Revision`]: a history keeps its revision only
//! while it is appended to, so a value kept under the same revision is still its message's,
//! and a truncated or rewritten history (compaction) is derived afresh.

use serde_json::value::RawValue;

use crate::conversation::{History, Message, Revision};

/// One value per message of one history, in history order: the messages' encodings
/// ([`HistoryEncodings`]) or their sizes.
#[derive(Debug)]
pub struct PerMessage<T> {
    /// The revision `values` were derived under; `None` before the first call.
    revision: Option<Revision>,
    values: Vec<T>,
}

/// The history's messages, encoded for a request body.
pub type HistoryEncodings = PerMessage<Box<RawValue>>;

impl<T> Default for PerMessage<T> {
    fn default() -> Self {
        Self { revision: None, values: Vec::new() }
    }
}

impl<T> PerMessage<T> {
    /// The values of all of `history`'s messages: those kept under its revision, then
    /// `derive`'s for the messages appended since.
    pub(super) fn of(&mut self, history: &History, derive: impl Fn(&Message) -> T) -> &[T] {
        // A longer list than the history under the same revision cannot happen (only
        // appends keep it); starting over is right then too.
        if self.revision != Some(history.revision()) || self.values.len() > history.len() {
            self.values.clear();
            self.revision = Some(history.revision());
        }
        let kept = self.values.len();
        self.values.extend(history[kept..].iter().map(derive));
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn counting(count: &Cell<usize>) -> impl Fn(&Message) -> Box<RawValue> + '_ {
        move |message| {
            count.set(count.get() + 1);
            RawValue::from_string(serde_json::to_string(&message.content).unwrap()).unwrap()
        }
    }

    fn texts(encoded: &[Box<RawValue>]) -> Vec<&str> {
        encoded.iter().map(|json| json.get()).collect()
    }

    #[test]
    fn only_the_messages_appended_since_the_last_call_are_encoded() {
        let (mut encodings, count) = (HistoryEncodings::default(), Cell::new(0));
        let mut history = History::from(vec![Message::user("a"), Message::user("b")]);
        assert_eq!(texts(encodings.of(&history, counting(&count))), ["\"a\"", "\"b\""]);
        history.push(Message::user("c"));
        assert_eq!(texts(encodings.of(&history, counting(&count))), ["\"a\"", "\"b\"", "\"c\""]);
        assert_eq!(count.get(), 3, "a and b were encoded once");
    }

    #[test]
    fn a_rewritten_or_truncated_history_is_encoded_afresh() {
        let (mut encodings, count) = (HistoryEncodings::default(), Cell::new(0));
        let mut history = History::from(vec![Message::user("a"), Message::user("b")]);
        encodings.of(&history, counting(&count));
        history.rewrite(|messages| messages[0].content = "summary".into());
        assert_eq!(texts(encodings.of(&history, counting(&count))), ["\"summary\"", "\"b\""]);
        history.rewrite(|messages| messages.truncate(1));
        history.push(Message::user("new"));
        assert_eq!(texts(encodings.of(&history, counting(&count))), ["\"summary\"", "\"new\""]);
    }

    #[test]
    fn another_history_with_as_many_messages_is_not_taken_for_the_first() {
        let mut encodings = HistoryEncodings::default();
        let count = Cell::new(0);
        encodings.of(&History::from(vec![Message::user("mine")]), counting(&count));
        let other = History::from(vec![Message::user("theirs")]);
        assert_eq!(texts(encodings.of(&other, counting(&count))), ["\"theirs\""]);
    }
}
