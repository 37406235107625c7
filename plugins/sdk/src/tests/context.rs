//! A call's context: the configuration parsed once per instance for the calls the host makes
//! in it, each call's own fields set anew.

use super::counted::{Counted, parsed};
use crate::bindings::agent_host::plugin::types::{CallContext, ToolCall};
use crate::{Context, NoArgs, Plugin, Tool};

fn raw(config: &str, session: &str, model_calls: u64) -> CallContext {
    CallContext { session_id: session.into(), config: config.into(), model_calls, turn_iteration: 1 }
}

/// What a handler saw: the configuration's number, the session, the model calls, the call id.
fn seen(ctx: &Context<Counted>) -> String {
    format!("{} {} {} {:?}", ctx.config.n, ctx.session_id, ctx.model_calls, ctx.call_id)
}

#[test]
fn the_configuration_is_parsed_once_for_the_calls_made_with_the_same_text() {
    let plugin = Plugin::<Counted>::new("counted", "1.0.0")
        .tool(Tool::new("look", "Says what it sees.", |ctx: &Context<Counted>, _: NoArgs| Ok(seen(ctx))))
        .on_stop(|ctx, _| crate::StopOutcome::Continue(seen(ctx)));
    let call = |id: &str| ToolCall { id: id.into(), name: "look".into(), arguments: "{}".into() };
    let before = parsed();

    let first = plugin.call_tool_raw(raw(r#"{"n": 1}"#, "s1", 3), call("c1")).unwrap();
    assert_eq!(first, r#"1 s1 3 Some("c1")"#);
    let stop = plugin.stop_raw(raw(r#"{"n": 1}"#, "s1", 4), "done");
    assert_eq!(stop, crate::StopOutcome::Continue("1 s1 4 None".into()), "no call id outside a tool");
    let again = plugin.call_tool_raw(raw(r#"{"n": 1}"#, "s2", 5), call("c2")).unwrap();
    assert_eq!(again, r#"1 s2 5 Some("c2")"#);
    assert_eq!(parsed() - before, 1, "one text, one parse");

    let changed = plugin.call_tool_raw(raw(r#"{"n": 2}"#, "s2", 6), call("c3")).unwrap();
    assert_eq!(changed, r#"2 s2 6 Some("c3")"#);
    assert_eq!(parsed() - before, 2, "another text, parsed");

    let error = plugin.call_tool_raw(raw(r#"{"m": 2}"#, "s2", 7), call("c4")).unwrap_err();
    assert!(error.contains("the configuration does not fit"), "{error}");
    let back = plugin.call_tool_raw(raw(r#"{"n": 2}"#, "s2", 8), call("c5")).unwrap();
    assert_eq!(back, r#"2 s2 8 Some("c5")"#, "a text that did not fit leaves nothing stale");
}

#[test]
fn texts_are_the_same_only_byte_for_byte() {
    use crate::context::same_text;
    let long = "x".repeat(1_000) + "tail";
    assert!(same_text(&long, &long.clone()));
    assert!(same_text("", ""));
    for (a, b) in [("abcdefgh1", "abcdefgh2"), ("abcdefgX12", "abcdefgY12"), ("short", "shorter"), ("", "a")]
    {
        assert!(!same_text(a, b), "{a} / {b}");
    }
    let mut changed = long.clone().into_bytes();
    changed[500] = b'y';
    assert!(!same_text(&long, std::str::from_utf8(&changed).unwrap()), "a byte in the middle");
}
