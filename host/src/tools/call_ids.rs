//! Tool-call ids fit to send back to any endpoint.
//!
//! A reply's call ids must be unique in the session: a result is matched to its call by id,
//! and a model that repeats an id, or a server that numbers every reply's calls from zero,
//! would give two results one id — a history the APIs refuse. An id the host makes up (for
//! a call without one, or one already taken) is 9 characters of `[A-Za-z0-9]`: Mistral's
//! chat templates refuse any other id, and every other template takes these. It is derived,
//! not drawn: a hash of the session, the place the reply takes in the history and the call's
//! place in the reply, so the same reply replayed into the same session gets the same ids.
//! A clash with an id already taken (improbable: one in 62^9 per pair) moves on to the next
//! candidate.

use std::collections::HashSet;

use sha2::{Digest, Sha256};

use super::ToolCall;

/// How long a made-up id is.
pub const ID_LEN: usize = 9;

const ALPHABET: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// `calls`, the reply about to take place `place` of a session's history (the number of
/// messages before it) in the session `session_id`, whose history holds the calls
/// `earlier`, with every id that is empty or already used (earlier in the session or in this
/// reply) replaced by a made-up one that is neither.
pub fn unique_ids<'a>(
    session_id: &str,
    place: usize,
    earlier: impl IntoIterator<Item = &'a ToolCall>,
    mut calls: Vec<ToolCall>,
) -> Vec<ToolCall> {
    if calls.is_empty() {
        return calls;
    }
    let mut taken: HashSet<String> = earlier.into_iter().map(|call| call.id.clone()).collect();
    for (index, call) in calls.iter_mut().enumerate() {
        if call.id.is_empty() || taken.contains(&call.id) {
            call.id = invent(session_id, place, index, |id| taken.contains(id));
        }
        taken.insert(call.id.clone());
    }
    calls
}

/// The id for call `position` of the reply at `place` of session `session_id`: the first
/// candidate `taken` does not claim.
fn invent(session_id: &str, place: usize, position: usize, taken: impl Fn(&str) -> bool) -> String {
    (0u64..)
        .map(|salt| candidate(session_id, place, position, salt))
        .find(|id| !taken(id))
        .expect("the candidates never run out")
}

fn candidate(session_id: &str, place: usize, position: usize, salt: u64) -> String {
    let mut hash = Sha256::new();
    let (place, position) = ((place as u64).to_le_bytes(), (position as u64).to_le_bytes());
    let parts: [&[u8]; 3] = [session_id.as_bytes(), &place, &position];
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

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "t".into(), arguments: "{}".into() }
    }

    fn ids(calls: &[ToolCall]) -> Vec<&str> {
        calls.iter().map(|c| c.id.as_str()).collect()
    }

    /// What Mistral's templates accept: 9 characters of `[A-Za-z0-9]`.
    fn strict(id: &str) -> bool {
        id.len() == ID_LEN && id.bytes().all(|b| b.is_ascii_alphanumeric())
    }

    #[test]
    fn strictness_is_length_and_alphabet() {
        assert!(strict("aZ09aZ09a"));
        assert!(!strict("call_0"));
        assert!(!strict("abcdefgh_"));
        assert!(!strict("abcdefghij"));
    }

    #[test]
    fn ids_the_endpoint_gave_once_are_kept() {
        let calls = unique_ids("s", 0, &[], vec![call("call_abc"), call("toolu_01")]);
        assert_eq!(ids(&calls), ["call_abc", "toolu_01"]);
    }

    #[test]
    fn a_missing_or_repeated_id_in_a_reply_is_replaced_by_a_strict_fresh_one() {
        let calls = unique_ids("s", 0, &[], vec![call("a"), call("a"), call(""), call("")]);
        assert_eq!(calls[0].id, "a");
        for made_up in &calls[1..] {
            assert!(strict(&made_up.id), "{}", made_up.id);
        }
        let unique: HashSet<&str> = ids(&calls).into_iter().collect();
        assert_eq!(unique.len(), 4, "{calls:?}");
    }

    #[test]
    fn an_id_used_earlier_in_the_session_is_replaced() {
        // A server that numbers each reply's calls from zero.
        let calls = unique_ids("s", 3, &[call("call_0")], vec![call("call_0")]);
        assert_ne!(calls[0].id, "call_0");
        assert!(strict(&calls[0].id), "{}", calls[0].id);
    }

    #[test]
    fn made_up_ids_are_the_same_on_a_replay_and_differ_between_sessions_and_places() {
        let again = || unique_ids("session-1", 0, &[], vec![call(""), call("")]);
        assert_eq!(again(), again());
        assert_ne!(again()[0].id, again()[1].id);
        let other_session = unique_ids("session-2", 0, &[], vec![call("")]);
        let later = unique_ids("session-1", 1, &[], vec![call("")]);
        assert_ne!(again()[0].id, other_session[0].id);
        assert_ne!(again()[0].id, later[0].id);
    }

    #[test]
    fn a_made_up_id_that_is_taken_gives_way_to_the_next_candidate() {
        // The history already holds the id the first candidate would be (as if a server
        // had sent it earlier): the next candidate is taken.
        let first_choice = invent("s", 1, 0, |_| false);
        let calls = unique_ids("s", 1, &[call(&first_choice)], vec![call("")]);
        assert_ne!(calls[0].id, first_choice);
        assert!(strict(&calls[0].id), "{}", calls[0].id);
        // Ids the endpoint sent are kept, and a made-up one never repeats one of them.
        // Here the endpoint named the first call with the id the second would get.
        let seconds_choice = invent("s", 2, 1, |_| false);
        let mixed = unique_ids("s", 2, &[], vec![call(&seconds_choice), call("")]);
        assert_eq!(mixed[0].id, seconds_choice);
        assert_ne!(mixed[1].id, seconds_choice);
        assert!(strict(&mixed[1].id));
    }
}
