//! A history message as a row of either store: its position, its JSON, and the usage of the
//! call that wrote it (for a reply), encoded once.

use crate::conversation::Message;
use crate::events::TokenUsage;

/// One message to insert; it owns what it writes, so a step can be made ready on one thread
/// and written on another.
pub struct MessageRow {
    pub seq: i64,
    pub body: String,
    /// What the call that wrote it used, as JSON, for a reply that reported it.
    pub usage: Option<String>,
}

/// `messages` as the rows they are stored as, each beside its message, the first at position
/// `first_seq`; `usage` gives the usage of replies by history position.
pub fn message_rows<'a>(
    first_seq: usize,
    messages: &'a [Message],
    usage: &'a [(usize, TokenUsage)],
) -> impl Iterator<Item = (MessageRow, &'a Message)> + 'a {
    messages.iter().enumerate().map(move |(offset, message)| {
        let position = first_seq + offset;
        let used = usage
            .iter()
            .find(|(at, _)| *at == position)
            .map(|(_, used)| serde_json::to_string(used).expect("usage always serializes"));
        let row = MessageRow {
            seq: position as i64,
            body: serde_json::to_string(message).expect("messages always serialize"),
            usage: used,
        };
        (row, message)
    })
}
