//! Token counts of the texts that come back in request after request — the system prompt, each
//! tool's definition, the injected messages, and the lines of those that changed by a line —
//! kept for the whole process, so a text is tokenized once while it keeps coming back rather
//! than once per model call or per session.
//!
//! Two generations bound what is kept: texts go into the newer; when it holds
//! [`GENERATION_BYTES`] of text the older is dropped and the newer takes its place, and a text
//! found in the older moves back into the newer. What recurs stays; what stopped recurring
//! goes within two generations.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::unpoisoned::LockUnpoisoned as _;

/// What one generation keeps: its texts' bytes and [`ENTRY_BYTES`] for each.
const GENERATION_BYTES: usize = 4 << 20;
/// What an entry costs beside its text (the boxed text's pointer and length, the count, the
/// table's slot): even a short text costs far less to look up than to tokenize.
const ENTRY_BYTES: usize = 48;

type Counts = HashMap<Box<str>, u64, foldhash::fast::RandomState>;

/// The counts of one tokenizer.
#[derive(Default)]
pub(super) struct CountMemo {
    generations: Mutex<Generations>,
}

#[derive(Default)]
struct Generations {
    newer: Counts,
    older: Counts,
    newer_bytes: usize,
}

impl CountMemo {
    /// What `count` makes of `text`: counted once while the text recurs.
    pub(super) fn count(&self, text: &str, count: impl FnOnce(&str) -> u64) -> u64 {
        if text.len() + ENTRY_BYTES > GENERATION_BYTES {
            return count(text);
        }
        if let Some(tokens) = self.generations.lock_unpoisoned().find(text) {
            return tokens;
        }
        // Counted outside the lock: other sessions' calls need not wait for it.
        let tokens = count(text);
        self.generations.lock_unpoisoned().keep(text.into(), tokens);
        tokens
    }
}

impl Generations {
    fn find(&mut self, text: &str) -> Option<u64> {
        if let Some(&tokens) = self.newer.get(text) {
            return Some(tokens);
        }
        let (text, tokens) = self.older.remove_entry(text)?;
        self.keep(text, tokens);
        Some(tokens)
    }

    fn keep(&mut self, text: Box<str>, tokens: u64) {
        let bytes = text.len() + ENTRY_BYTES;
        if self.newer_bytes + bytes > GENERATION_BYTES {
            self.older = std::mem::take(&mut self.newer);
            self.newer_bytes = 0;
        }
        self.newer_bytes += bytes;
        self.newer.insert(text, tokens);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// The length of every numbered text the tests make.
    const TEXT_BYTES: usize = 64;

    fn text(n: usize) -> String {
        format!("{n:0>width$}", width = TEXT_BYTES)
    }

    /// A count that takes a text's length for its tokens, and counts its own calls in `calls`.
    fn counting(calls: &Cell<usize>) -> impl Fn(&str) -> u64 + Copy + '_ {
        move |text: &str| {
            calls.set(calls.get() + 1);
            text.len() as u64
        }
    }

    #[test]
    fn a_recurring_text_is_counted_once() {
        let memo = CountMemo::default();
        let calls = Cell::new(0);
        let count = counting(&calls);
        assert_eq!(memo.count(&text(1), count), TEXT_BYTES as u64);
        assert_eq!(memo.count(&text(1), count), TEXT_BYTES as u64);
        assert_eq!(calls.get(), 1);
        memo.count("ok", count);
        assert_eq!(memo.count("ok", count), 2);
        assert_eq!(calls.get(), 2, "a short text is kept too");
    }

    #[test]
    fn what_stops_recurring_goes_within_two_generations_and_what_recurs_stays() {
        let memo = CountMemo::default();
        let calls = Cell::new(0);
        let count = counting(&calls);
        let per_generation = GENERATION_BYTES / (TEXT_BYTES + ENTRY_BYTES);
        memo.count(&text(0), count);
        for n in 1..per_generation * 2 + per_generation / 4 {
            memo.count(&text(n), count);
            // Text 0 recurs now and then: it keeps moving into the newer generation.
            if n % (per_generation / 2) == 0 {
                memo.count(&text(0), count);
            }
        }
        let counted = calls.get();
        memo.count(&text(0), count);
        assert_eq!(calls.get(), counted, "the recurring text was kept");
        memo.count(&text(1), count);
        assert_eq!(calls.get(), counted + 1, "a text not seen for two generations was dropped");
        let generations = memo.generations.lock_unpoisoned();
        let kept: usize =
            generations.newer.keys().chain(generations.older.keys()).map(|text| text.len()).sum();
        assert!(kept <= 2 * GENERATION_BYTES, "{kept}");
    }
}
