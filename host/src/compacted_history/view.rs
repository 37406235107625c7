//! A view and what replaces one: the data a compaction produces and the session sends.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use super::checks::CompactionError;
use crate::conversation::Message;

/// Names a message a view can send: a stored message by its history position, or a summary
/// a compaction wrote, by its number in the session (from 1, never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageId {
    Message(u64),
    Summary(u64),
}

impl std::fmt::Display for MessageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Message(seq) => write!(f, "message #{seq}"),
            Self::Summary(number) => write!(f, "summary #{number}"),
        }
    }
}

/// What is sent in place of the first `covers` stored messages: `entries`, in order. What
/// the history holds after them is sent as it is stored, appends included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactedHistory {
    pub covers: usize,
    pub entries: Vec<MessageId>,
}

/// A session's summaries by number.
pub type Summaries = BTreeMap<u64, Message>;

/// One message as it is sent, with the id a compaction names it by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewed<'a> {
    pub id: MessageId,
    pub message: &'a Message,
}

/// One entry of what a compaction puts in place of the prefix it replaces.
#[derive(Debug, Clone, PartialEq)]
pub enum Replacement {
    /// A message sent now (stored, or a summary of an earlier compaction), kept.
    Keep(MessageId),
    /// A new summary message; it is numbered when the view is committed.
    Summary(Message),
}

/// What a compaction returns: the first `replaces` messages being sent are replaced by
/// `entries`; the messages after them stay.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Compaction {
    pub replaces: usize,
    pub entries: Vec<Replacement>,
}

impl CompactedHistory {
    /// Whether the view names only messages there are (a stored one among those it covers, a
    /// summary the session has), each once; the index of the first entry that does not.
    pub fn resolves(
        &self,
        history_len: usize,
        summaries: &Summaries,
    ) -> Result<(), (usize, CompactionError)> {
        let mut seen = HashSet::new();
        for (index, &id) in self.entries.iter().enumerate() {
            let known = match id {
                MessageId::Message(seq) => (seq as usize) < self.covers.min(history_len),
                MessageId::Summary(number) => summaries.contains_key(&number),
            };
            if !known {
                return Err((index, CompactionError::Unknown { id }));
            }
            if !seen.insert(id) {
                return Err((index, CompactionError::Duplicate { id }));
            }
        }
        Ok(())
    }
}

/// The messages sent, with their ids: the view's entries then the history after what it
/// covers; the whole history when there is no view.
pub fn viewed<'a>(
    view: Option<&CompactedHistory>,
    history: &'a [Message],
    summaries: &'a Summaries,
) -> Result<Vec<Viewed<'a>>, CompactionError> {
    let Some(view) = view else {
        return Ok(history.iter().enumerate().map(|(seq, message)| stored(seq, message)).collect());
    };
    if view.covers > history.len() {
        return Err(CompactionError::PastTheHistory { covers: view.covers, len: history.len() });
    }
    view.resolves(history.len(), summaries).map_err(|(_, error)| error)?;
    let entries = view.entries.iter().map(|&id| {
        let message = match id {
            MessageId::Message(seq) => &history[seq as usize],
            MessageId::Summary(number) => &summaries[&number],
        };
        Viewed { id, message }
    });
    let rest = history.iter().enumerate().skip(view.covers).map(|(seq, message)| stored(seq, message));
    Ok(entries.chain(rest).collect())
}

fn stored(seq: usize, message: &Message) -> Viewed<'_> {
    Viewed { id: MessageId::Message(seq as u64), message }
}

/// [`viewed`]'s messages alone, copied: what a model call is sent.
pub fn materialize(
    view: Option<&CompactedHistory>,
    history: &[Message],
    summaries: &Summaries,
) -> Result<Vec<Message>, CompactionError> {
    Ok(viewed(view, history, summaries)?.into_iter().map(|viewed| viewed.message.clone()).collect())
}

/// The view after `compaction` of what `view` sends, and the summaries it adds, numbered
/// from `next_summary`. `compaction` must have passed [`super::check`] against that.
pub fn apply(
    view: Option<&CompactedHistory>,
    compaction: Compaction,
    next_summary: u64,
) -> (CompactedHistory, Vec<(u64, Message)>) {
    let (covers, old_entries) = view.map_or((0, &[][..]), |view| (view.covers, &view.entries[..]));
    let mut added = Vec::new();
    let mut entries: Vec<MessageId> = compaction
        .entries
        .into_iter()
        .map(|entry| match entry {
            Replacement::Keep(id) => id,
            Replacement::Summary(message) => {
                let number = next_summary + added.len() as u64;
                added.push((number, message));
                MessageId::Summary(number)
            }
        })
        .collect();
    // What is sent is the old entries then the history from `covers` on: a prefix that ends
    // inside the old entries leaves the rest of them, one that goes further covers more.
    let covers = if compaction.replaces <= old_entries.len() {
        entries.extend_from_slice(&old_entries[compaction.replaces..]);
        covers
    } else {
        covers + (compaction.replaces - old_entries.len())
    };
    (CompactedHistory { covers, entries }, added)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;

    fn history(count: usize) -> Vec<Message> {
        (0..count).map(|n| Message::user(format!("m{n}"))).collect()
    }

    fn texts(messages: &[Message]) -> Vec<&str> {
        messages.iter().map(|message| message.content.as_str()).collect()
    }

    #[test]
    fn without_a_view_the_whole_history_is_sent_with_positions_for_ids() {
        let history = history(3);
        let summaries = Summaries::new();
        let sent = viewed(None, &history, &summaries).unwrap();
        let ids: Vec<MessageId> = sent.iter().map(|viewed| viewed.id).collect();
        assert_eq!(ids, [MessageId::Message(0), MessageId::Message(1), MessageId::Message(2)]);
    }

    #[test]
    fn a_view_sends_its_entries_then_the_history_after_what_it_covers() {
        let history = history(5);
        let summaries = Summaries::from([(1, Message::system("summary of m1..m2"))]);
        let view =
            CompactedHistory { covers: 3, entries: vec![MessageId::Message(0), MessageId::Summary(1)] };
        let sent = materialize(Some(&view), &history, &summaries).unwrap();
        assert_eq!(texts(&sent), ["m0", "summary of m1..m2", "m3", "m4"]);
    }

    #[test]
    fn a_second_compaction_inside_the_first_views_entries_keeps_the_rest_of_them() {
        let history = history(6);
        // First: m0..m3 become [m0, s1]; sent: m0 s1 m4 m5.
        let first = Compaction {
            replaces: 4,
            entries: vec![
                Replacement::Keep(MessageId::Message(0)),
                Replacement::Summary(Message::system("s1")),
            ],
        };
        let (view, added) = apply(None, first, 1);
        assert_eq!(
            view,
            CompactedHistory { covers: 4, entries: vec![MessageId::Message(0), MessageId::Summary(1)] }
        );
        let summaries: Summaries = added.into_iter().collect();
        // Second replaces only m0 with s2: s1 stays, and nothing more is covered.
        let second = Compaction { replaces: 1, entries: vec![Replacement::Summary(Message::system("s2"))] };
        let (inside, added) = apply(Some(&view), second, 2);
        assert_eq!(
            inside,
            CompactedHistory { covers: 4, entries: vec![MessageId::Summary(2), MessageId::Summary(1)] }
        );
        let mut all = summaries.clone();
        all.extend(added);
        assert_eq!(texts(&materialize(Some(&inside), &history, &all).unwrap()), ["s2", "s1", "m4", "m5"]);
        // Third replaces the first three sent (m0, s1, m4) keeping the earlier summary.
        let third = Compaction { replaces: 3, entries: vec![Replacement::Keep(MessageId::Summary(1))] };
        let (beyond, added) = apply(Some(&view), third, 3);
        assert!(added.is_empty());
        assert_eq!(beyond, CompactedHistory { covers: 5, entries: vec![MessageId::Summary(1)] });
        assert_eq!(texts(&materialize(Some(&beyond), &history, &summaries).unwrap()), ["s1", "m5"]);
    }

    #[test]
    fn a_view_naming_what_is_not_there_is_refused_with_the_entry() {
        let history = history(4);
        let summaries = Summaries::from([(1, Message::system("s"))]);
        let uncovered =
            CompactedHistory { covers: 2, entries: vec![MessageId::Message(0), MessageId::Message(3)] };
        assert_eq!(
            uncovered.resolves(history.len(), &summaries),
            Err((1, CompactionError::Unknown { id: MessageId::Message(3) }))
        );
        let twice =
            CompactedHistory { covers: 2, entries: vec![MessageId::Summary(1), MessageId::Summary(1)] };
        assert_eq!(
            twice.resolves(history.len(), &summaries),
            Err((1, CompactionError::Duplicate { id: MessageId::Summary(1) }))
        );
        let missing = CompactedHistory { covers: 2, entries: vec![MessageId::Summary(2)] };
        assert!(matches!(viewed(Some(&missing), &history, &summaries), Err(CompactionError::Unknown { .. })));
        let long = CompactedHistory { covers: 9, entries: vec![] };
        assert_eq!(
            viewed(Some(&long), &history, &summaries),
            Err(CompactionError::PastTheHistory { covers: 9, len: 4 })
        );
    }

    #[test]
    fn ids_read_and_write_as_tagged_numbers() {
        let ids = [MessageId::Message(3), MessageId::Summary(1)];
        let text = serde_json::to_string(&ids).unwrap();
        assert_eq!(text, r#"[{"message":3},{"summary":1}]"#);
        assert_eq!(serde_json::from_str::<Vec<MessageId>>(&text).unwrap(), ids);
        assert_eq!(MessageId::Summary(2).to_string(), "summary #2");
    }
}
