//! Token counts of the short pieces a tokenizer's pre-split cuts text into (a word with its
//! leading space, a number, a run of punctuation), kept per thread in a fixed table.
//!
//! New text — a tool's result, the list a plugin injects, a reply — is mostly words the
//! process has counted before, and counting a piece anew builds a byte-pair encoder with two
//! allocations of its own; a hit here is one hash and one comparison. The table is
//! direct-mapped and fixed in size, so it never allocates and a piece that collides simply
//! replaces the one before it: what it holds is always an exact count, only how much of
//! them it holds varies.

use std::cell::RefCell;
use std::hash::BuildHasher as _;

/// Slots per thread and tokenizer table: a few hundred KiB a thread at most.
const SLOTS: usize = 4096;
/// The longest piece kept; longer ones are rare and cheap to count against their length.
const MAX_PIECE: usize = 22;

#[derive(Clone, Copy)]
struct Slot {
    /// The tokenizer the count is for (its index), and the piece's length; `len == 0` is empty.
    tokenizer: u8,
    len: u8,
    tokens: u32,
    bytes: [u8; MAX_PIECE],
}

const EMPTY: Slot = Slot { tokenizer: 0, len: 0, tokens: 0, bytes: [0; MAX_PIECE] };

thread_local! {
    static TABLE: RefCell<Box<[Slot; SLOTS]>> = RefCell::new(Box::new([EMPTY; SLOTS]));
}

/// The counts of `pieces` for the tokenizer numbered `tokenizer`, summed: each from the table
/// or else from `count` (and then kept). The table is borrowed once for the whole text, not
/// once per piece: reaching a thread's own table is dearer than a lookup in it.
pub(super) fn count_all<'a>(
    tokenizer: u8,
    pieces: impl Iterator<Item = &'a str>,
    count: impl Fn(&str) -> usize,
) -> usize {
    TABLE.with_borrow_mut(|table| pieces.map(|piece| count_one(table, tokenizer, piece, &count)).sum())
}

fn count_one(table: &mut [Slot; SLOTS], tokenizer: u8, piece: &str, count: &impl Fn(&str) -> usize) -> usize {
    let bytes = piece.as_bytes();
    if bytes.is_empty() || bytes.len() > MAX_PIECE {
        return count(piece);
    }
    let hash = foldhash::fast::FixedState::with_seed(u64::from(tokenizer)).hash_one(bytes);
    let slot = &mut table[(hash as usize) % SLOTS];
    if slot.tokenizer == tokenizer
        && usize::from(slot.len) == bytes.len()
        && &slot.bytes[..bytes.len()] == bytes
    {
        return slot.tokens as usize;
    }
    let tokens = count(piece);
    if let Ok(kept) = u32::try_from(tokens) {
        slot.tokenizer = tokenizer;
        slot.len = bytes.len() as u8;
        slot.tokens = kept;
        slot.bytes[..bytes.len()].copy_from_slice(bytes);
    }
    tokens
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn count(tokenizer: u8, piece: &str, count: impl Fn(&str) -> usize) -> usize {
        count_all(tokenizer, std::iter::once(piece), count)
    }

    #[test]
    fn a_piece_is_counted_once_per_thread_and_tokenizer_and_a_long_one_every_time() {
        let calls = Cell::new(0);
        let counting = |tokens: usize| {
            let calls = &calls;
            move |_: &str| {
                calls.set(calls.get() + 1);
                tokens
            }
        };
        assert_eq!(count(1, " hello", counting(1)), 1);
        assert_eq!(count(1, " hello", counting(99)), 1, "kept: not counted again");
        assert_eq!(calls.get(), 1);
        assert_eq!(count(2, " hello", counting(2)), 2, "another tokenizer counts for itself");
        assert_eq!(count(1, " hellO", counting(3)), 3, "another piece");
        let long = "x".repeat(MAX_PIECE + 1);
        assert_eq!(count(1, &long, counting(5)), 5);
        assert_eq!(count(1, &long, counting(6)), 6, "a long piece is never kept");
        assert_eq!(calls.get(), 5);
    }

    #[test]
    fn a_texts_pieces_are_summed_each_counted_once() {
        let calls = Cell::new(0);
        let length = |piece: &str| {
            calls.set(calls.get() + 1);
            piece.len()
        };
        let pieces = ["alpha", " beta", " alpha", " beta", "!"];
        assert_eq!(count_all(4, pieces.into_iter(), length), 5 + 5 + 6 + 5 + 1);
        assert_eq!(calls.get(), 4, "` beta` the second time was kept");
    }

    #[test]
    fn pieces_that_share_a_slot_replace_each_other_and_each_count_stays_its_own() {
        // More pieces than slots: some collide; every answer is still its piece's count.
        for round in 0..2 {
            for n in 0..2 * SLOTS {
                let piece = format!(" {n}");
                let own = |p: &str| p.trim().parse::<usize>().expect("a number");
                assert_eq!(count(3, &piece, own), n, "round {round}, piece {piece:?}");
            }
        }
    }
}
