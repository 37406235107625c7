//! State read and written with `get_kept`/`set_kept`: parsed once per instance for one stored
//! text, and never a value the stored text no longer says.

use serde_json::json;

use super::counted::{Counted, parsed};
use crate::state;
use crate::testing::{reset, store, stored};

fn read() -> Option<Counted> {
    state::get_kept::<Counted>("k").unwrap()
}

#[test]
fn one_stored_text_is_parsed_once_and_a_written_value_not_at_all() {
    reset();
    assert_eq!(read(), None, "nothing stored");
    store("k", json!({"n": 1}));
    assert_eq!(read(), Some(Counted { n: 1 }));
    assert_eq!(read(), Some(Counted { n: 1 }));
    assert_eq!(parsed(), 1, "one text, one parse");

    let text = state::set_kept("k", &Counted { n: 2 }).unwrap();
    assert_eq!(text, r#"{"n":2}"#);
    assert_eq!(stored("k"), Some(json!({"n": 2})), "written through to the host");
    assert_eq!(read(), Some(Counted { n: 2 }));
    assert_eq!(parsed(), 1, "the value written is kept");
}

#[test]
fn a_text_changed_behind_the_kept_value_is_parsed_again() {
    reset();
    state::set_kept("k", &Counted { n: 1 }).unwrap();
    store("k", json!({"n": 3}));
    assert_eq!(read(), Some(Counted { n: 3 }), "the stored text is the truth");
    assert_eq!(parsed(), 1);
    state::remove("k");
    assert_eq!(read(), None, "a removed key is not read from what was kept");
    assert_eq!(state::get_kept_or_default::<Vec<u32>>("k").unwrap(), Vec::<u32>::new());
}

#[test]
fn a_value_kept_as_another_type_is_parsed_as_the_one_asked_for() {
    reset();
    store("k", json!({"n": 4}));
    let as_value = state::get_kept::<serde_json::Value>("k").unwrap();
    assert_eq!(as_value, Some(json!({"n": 4})));
    assert_eq!(read(), Some(Counted { n: 4 }));
    assert_eq!(parsed(), 1, "the kept `Value` is no `Counted`: parsed");
    assert_eq!(read(), Some(Counted { n: 4 }));
    assert_eq!(parsed(), 1, "now kept as a `Counted`");
}
