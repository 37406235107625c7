//! Tool-call ids fit to send back to any endpoint.
//!
//! A reply's call ids must be unique in the session: a result is matched to its call by id,
//! and a model that repeats an id, or a server that numbers every reply's calls from zero,
//! would give two results one id — a history the APIs refuse. An id the host makes up (for
//! a call without one, or one already taken) is 9 characters of `[A-Za-z0-9]`, the
//! strictest form a chat template asks for (Mistral's). It is derived from the session id
//! and the call's place in the history, so replaying a session makes the same ids.

use std::collections::HashSet;

use crate::model::call_ids::invent;
use crate::model::{Message, ToolCallRequest};

/// `calls`, the reply about to be appended to `history` in the session `session_id`, with
/// every id that is empty or already used (earlier in the session or in this reply)
/// replaced by a made-up one that is neither.
pub(super) fn unique_ids(
    session_id: &str,
    history: &[Message],
    mut calls: Vec<ToolCallRequest>,
) -> Vec<ToolCallRequest> {
    if calls.is_empty() {
        return calls;
    }
    let mut taken: HashSet<String> =
        history.iter().flat_map(|message| &message.tool_calls).map(|call| call.id.clone()).collect();
    for (index, call) in calls.iter_mut().enumerate() {
        if call.id.is_empty() || taken.contains(&call.id) {
            call.id = invent(session_id, history.len(), index, |id| taken.contains(id));
        }
        taken.insert(call.id.clone());
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCallRequest {
        ToolCallRequest { id: id.into(), name: "t".into(), arguments: "{}".into() }
    }

    fn ids(calls: &[ToolCallRequest]) -> Vec<&str> {
        calls.iter().map(|c| c.id.as_str()).collect()
    }

    fn strict(id: &str) -> bool {
        id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric())
    }

    #[test]
    fn ids_the_endpoint_gave_once_are_kept() {
        let calls = unique_ids("s", &[], vec![call("call_abc"), call("toolu_01")]);
        assert_eq!(ids(&calls), ["call_abc", "toolu_01"]);
    }

    #[test]
    fn a_missing_or_repeated_id_in_a_reply_is_replaced_by_a_strict_fresh_one() {
        let calls = unique_ids("s", &[], vec![call("a"), call("a"), call(""), call("")]);
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
        let history = [
            Message::user("go"),
            Message::assistant("", vec![call("call_0")]),
            Message::tool("call_0", "ok"),
        ];
        let calls = unique_ids("s", &history, vec![call("call_0")]);
        assert_ne!(calls[0].id, "call_0");
        assert!(strict(&calls[0].id), "{}", calls[0].id);
    }

    #[test]
    fn made_up_ids_are_the_same_on_a_replay_and_differ_between_sessions_and_positions() {
        let again = || unique_ids("session-1", &[], vec![call(""), call("")]);
        assert_eq!(again(), again());
        let other_session = unique_ids("session-2", &[], vec![call("")]);
        let later = unique_ids("session-1", &[Message::user("x")], vec![call("")]);
        assert_ne!(again()[0].id, other_session[0].id);
        assert_ne!(again()[0].id, later[0].id);
    }

    #[test]
    fn a_made_up_id_that_is_taken_gives_way_to_the_next_candidate() {
        let first_choice = invent("s", 1, 0, |_| false);
        let history = [Message::assistant("", vec![call(&first_choice)])];
        let calls = unique_ids("s", &history, vec![call("")]);
        assert_ne!(calls[0].id, first_choice);
        assert!(strict(&calls[0].id), "{}", calls[0].id);
    }
}
