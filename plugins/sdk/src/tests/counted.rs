//! A value that counts how many times it was parsed on this thread: what the tests of parsing
//! once per instance read.

use std::cell::Cell;

use serde::{Deserialize, Deserializer, Serialize};

thread_local! {
    static PARSED: Cell<usize> = const { Cell::new(0) };
}

/// `{"n": ...}`, counting each parse.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub(super) struct Counted {
    pub(super) n: u32,
}

impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            n: u32,
        }
        PARSED.set(PARSED.get() + 1);
        Ok(Counted { n: Raw::deserialize(deserializer)?.n })
    }
}

/// How many times a [`Counted`] was parsed on this thread so far.
pub(super) fn parsed() -> usize {
    PARSED.get()
}
