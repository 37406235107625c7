//! Ids for the tool calls an endpoint sent without one.
//!
//! They are 9 characters of `[A-Za-z0-9]`: Mistral's chat templates refuse any other id, and
//! every other template takes these. They are derived, not drawn: a hash of the session, the
//! place the reply takes in the history and the call's place in the reply, so the same reply
//! replayed into the same session gets the same ids. A clash with an id the history already
//! holds (improbable: one in 62^9 per pair) moves on to the next candidate, so an invented id
//! is unique within the session's history.

use std::collections::HashSet;

use sha2::{Digest, Sha256};

use super::{History, ToolCallRequest};

/// How long an invented id is.
pub const ID_LEN: usize = 9;

const ALPHABET: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Gives every call in `calls` without an id one; `calls` is the reply about to be appended
/// to `history` in session `session_id`.
pub fn name_missing(calls: &mut [ToolCallRequest], session_id: &str, history: &History) {
    if calls.iter().all(|call| !call.id.is_empty()) {
        return;
    }
    let mut taken: HashSet<String> = history
        .iter()
        .flat_map(|message| message.tool_calls.iter().map(|call| call.id.clone()))
        .chain(calls.iter().map(|call| call.id.clone()))
        .collect();
    for (position, call) in calls.iter_mut().enumerate() {
        if call.id.is_empty() {
            call.id = invent(session_id, history.len(), position, |id| taken.contains(id));
            taken.insert(call.id.clone());
        }
    }
}

/// The id for call `position` of the reply at `message_index` of session `session_id`: the
/// first candidate `taken` does not claim.
pub fn invent(
    session_id: &str,
    message_index: usize,
    position: usize,
    taken: impl Fn(&str) -> bool,
) -> String {
    (0u64..)
        .map(|salt| candidate(session_id, message_index, position, salt))
        .find(|id| !taken(id))
        .expect("the candidates never run out")
}

fn candidate(session_id: &str, message_index: usize, position: usize, salt: u64) -> String {
    let mut hash = Sha256::new();
    let (message_index, position) = ((message_index as u64).to_le_bytes(), (position as u64).to_le_bytes());
    let parts: [&[u8]; 3] = [session_id.as_bytes(), &message_index, &position];
    for part in parts {
        // Length-prefixed, so no two different inputs hash the same bytes.
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    hash.update(salt.to_le_bytes());
    let digest = hash.finalize();
    let mut number = u64::from_le_bytes(digest[..8].try_into().expect("a SHA-256 digest has 32 bytes"));
    let mut id = String::with_capacity(ID_LEN);
    for _ in 0..ID_LEN {
        id.push(ALPHABET[(number % 62) as usize] as char);
        number /= 62;
    }
    id
}

/// Whether `id` is what Mistral's templates accept: 9 characters of `[A-Za-z0-9]`.
pub fn is_strict(id: &str) -> bool {
    id.len() == ID_LEN && id.bytes().all(|byte| byte.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;

    fn unnamed(name: &str) -> ToolCallRequest {
        ToolCallRequest { id: String::new(), name: name.into(), arguments: "{}".into() }
    }

    #[test]
    fn invented_ids_are_nine_alphanumerics_and_the_same_on_a_replay() {
        let history = History::from(vec![Message::user("go")]);
        let mut first = vec![unnamed("a"), unnamed("b")];
        name_missing(&mut first, "session-1", &history);
        assert!(first.iter().all(|call| is_strict(&call.id)), "{first:?}");
        assert_ne!(first[0].id, first[1].id);
        let mut again = vec![unnamed("a"), unnamed("b")];
        name_missing(&mut again, "session-1", &history);
        assert_eq!(first, again, "the same reply in the same place gets the same ids");
        let mut elsewhere = vec![unnamed("a"), unnamed("b")];
        name_missing(&mut elsewhere, "session-2", &history);
        assert_ne!(first[0].id, elsewhere[0].id, "another session, other ids");
    }

    #[test]
    fn an_id_the_history_or_the_reply_holds_is_never_invented_again() {
        // The history already holds the id the first candidate would be (as if a server
        // had sent it earlier): the next candidate is taken.
        let first_choice = invent("s", 2, 0, |_| false);
        let earlier = ToolCallRequest { id: first_choice.clone(), name: "x".into(), arguments: "{}".into() };
        let history = History::from(vec![Message::user("go"), Message::assistant("", vec![earlier])]);
        let mut calls = vec![unnamed("a")];
        name_missing(&mut calls, "s", &history);
        assert_ne!(calls[0].id, first_choice);
        assert!(is_strict(&calls[0].id), "{calls:?}");
        // Ids the endpoint sent are kept, and an invented one never repeats one of them.
        // Here the endpoint named the first call with the id the second would get.
        let seconds_choice = invent("s", 2, 1, |_| false);
        let mut mixed = vec![ToolCallRequest { id: seconds_choice.clone(), ..unnamed("a") }, unnamed("b")];
        name_missing(&mut mixed, "s", &History::from(vec![Message::user("go"), Message::user("again")]));
        assert_eq!(mixed[0].id, seconds_choice);
        assert_ne!(mixed[1].id, seconds_choice);
        assert!(is_strict(&mixed[1].id));
    }

    #[test]
    fn strictness_is_length_and_alphabet() {
        assert!(is_strict("aZ09aZ09a"));
        assert!(!is_strict("call_0"));
        assert!(!is_strict("abcdefgh_"));
        assert!(!is_strict("abcdefghij"));
    }
}
