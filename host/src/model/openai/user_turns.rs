//! Consecutive `user` messages of a history, sent as one.
//!
//! A turn that ends before the model answers (an endpoint that cannot be reached, Ctrl-C, a
//! killed host) leaves its prompt in the history with no reply after it; the next prompt
//! follows it, and strict chat templates (Qwen3.5's, Mistral's, Apertus's in llama.cpp, vLLM,
//! SGLang) refuse two user turns in a row. The history keeps both prompts as they were typed
//! (nothing is rewritten, nothing is made up in the model's name); a request carries a run of
//! them as paragraphs of one `user` message, as the injected messages ride on the user's turn
//! (`injected.rs`) and as Anthropic's Messages API groups a request into turns. So every
//! history a failed turn leaves, an older one included, is one every template takes.

use std::ops::Range;

use super::injected;
use crate::conversation::{Message, Role};

/// The positions of `history` as the request's messages: each message alone, but a run of
/// consecutive `user` messages as one range.
pub(super) fn runs(history: &[Message]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= history.len() {
            return None;
        }
        let mut end = start + 1;
        if history[start].role == Role::User {
            while end < history.len() && history[end].role == Role::User {
                end += 1;
            }
        }
        let run = start..end;
        start = end;
        Some(run)
    })
}

/// The text of one user message made of `messages`, paragraphs joined by a blank line.
pub(super) fn joined(messages: &[Message]) -> String {
    messages.iter().fold(String::new(), |text, message| injected::append(&text, &message.content))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_user_messages_is_one_range_and_every_other_message_its_own() {
        let history = [
            Message::system("context"),
            Message::user("first try"),
            Message::user("second try"),
            Message::assistant("answered", Vec::new()),
            Message::user("thanks"),
            Message::tool("call_1", "result"),
            Message::tool("call_2", "result"),
        ];
        let found: Vec<Range<usize>> = runs(&history).collect();
        assert_eq!(found, [0..1, 1..3, 3..4, 4..5, 5..6, 6..7]);
        assert_eq!(joined(&history[1..3]), "first try\n\nsecond try");
        assert_eq!(joined(&history[4..5]), "thanks");
        assert_eq!(runs(&[]).count(), 0);
    }
}
