//! Where a Chat Completions request carries plugins' injected messages (`[model] injected_as`).
//!
//! Strict chat templates (Qwen3.5's, Mistral's, Apertus's among llama.cpp's) refuse a `system`
//! message anywhere but first, and some refuse two user turns in a row; so by default every
//! injected message becomes part of one `user` message after the history: merged into the
//! history's last message when that is the user's, else a message of its own.
//!
//! The history's kept encodings (`HistoryEncodings`) are never touched: a merged message is
//! encoded afresh on every call, beside the kept encoding of the message it extends.

use crate::config::InjectedAs;
use crate::conversation::{History, Message, Role};

/// How one call's injected messages are sent.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Placement<'a> {
    /// Text appended to the system prompt, after a blank line (`first-system`).
    pub system: Option<String>,
    /// One user message's text: sent after the history, or appended to its last message
    /// when `merge_into_last`.
    pub user: Option<String>,
    /// The history's last message is the user's and `user` is appended to it.
    pub merge_into_last: bool,
    /// Messages sent after the history as the plugins gave them (`system`).
    pub as_given: &'a [Message],
}

/// Injected messages are joined by a blank line, as paragraphs of one message.
const JOINER: &str = "\n\n";

/// Where `injected` goes in a request carrying `history`.
pub(super) fn place<'a>(injected: &'a [Message], history: &History, how: InjectedAs) -> Placement<'a> {
    if injected.is_empty() {
        return Placement::default();
    }
    let (system, user) = match how {
        InjectedAs::System => return Placement { as_given: injected, ..Placement::default() },
        InjectedAs::User => (None, joined(injected.iter())),
        InjectedAs::FirstSystem => (
            joined(injected.iter().filter(|message| message.role == Role::System)),
            // A plugin that speaks as the user keeps speaking as the user.
            joined(injected.iter().filter(|message| message.role != Role::System)),
        ),
    };
    let merge_into_last = user.is_some() && history.last().is_some_and(|last| last.role == Role::User);
    Placement { system, user, merge_into_last, as_given: &[] }
}

/// The non-empty contents of `messages`, joined; `None` when there are none.
fn joined<'a>(messages: impl Iterator<Item = &'a Message>) -> Option<String> {
    let parts: Vec<&str> =
        messages.map(|message| message.content.trim_end()).filter(|text| !text.trim().is_empty()).collect();
    (!parts.is_empty()).then(|| parts.join(JOINER))
}

/// `first` then `second` as paragraphs of one text.
pub(super) fn append(first: &str, second: &str) -> String {
    if first.trim().is_empty() {
        return second.to_owned();
    }
    let mut text = String::with_capacity(first.len() + JOINER.len() + second.len());
    text.push_str(first.trim_end());
    text.push_str(JOINER);
    text.push_str(second);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn injected() -> Vec<Message> {
        vec![Message::system("### Reminders\n* #1 a"), Message::user("notice: b"), Message::system("  ")]
    }

    #[test]
    fn as_user_all_of_them_become_one_user_message_merged_into_the_users_turn() {
        let messages = injected();
        let after_prompt = History::from(vec![Message::user("do it")]);
        let placed = place(&messages, &after_prompt, InjectedAs::User);
        let expected = Placement {
            user: Some("### Reminders\n* #1 a\n\nnotice: b".into()),
            merge_into_last: true,
            ..Placement::default()
        };
        assert_eq!(placed, expected);
        let after_tools = History::from(vec![Message::user("do it"), Message::tool("c1", "done")]);
        let placed = place(&messages, &after_tools, InjectedAs::User);
        assert_eq!(placed, Placement { merge_into_last: false, ..expected });
    }

    #[test]
    fn first_system_takes_the_system_ones_and_leaves_the_users_as_user() {
        let messages = injected();
        let history = History::from(vec![Message::user("do it"), Message::tool("c1", "done")]);
        let placed = place(&messages, &history, InjectedAs::FirstSystem);
        assert_eq!(
            placed,
            Placement {
                system: Some("### Reminders\n* #1 a".into()),
                user: Some("notice: b".into()),
                ..Placement::default()
            }
        );
        let only_system = [Message::system("note")];
        let placed = place(&only_system, &History::from(vec![Message::user("x")]), InjectedAs::FirstSystem);
        assert_eq!(placed, Placement { system: Some("note".into()), ..Placement::default() });
    }

    #[test]
    fn as_system_they_go_as_given_and_nothing_injected_places_nothing() {
        let messages = injected();
        let history = History::from(vec![Message::user("x")]);
        assert_eq!(place(&messages, &history, InjectedAs::System).as_given, &messages[..]);
        assert_eq!(place(&[], &history, InjectedAs::User), Placement::default());
        assert_eq!(append("", "b"), "b");
        assert_eq!(append("a\n", "b"), "a\n\nb");
    }
}
