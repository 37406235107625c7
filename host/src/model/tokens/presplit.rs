//! The pre-split of o200k and cl100k for text that is all ASCII, by hand: the pieces their
//! regular expressions cut it into, without running them.
//!
//! The regexes (`bpe_openai`'s, after tiktoken's) are Unicode-aware and tried alternative by
//! alternative at each piece's start, which made them the largest part of counting a
//! message's tokens. Restricted to ASCII their classes are a byte's kind — a letter (upper or
//! lower case), a digit, white space, anything else — and each alternative is a few steps
//! over runs of one kind; `tests` checks the two agree, piece for piece, on generated and
//! real text. Text with any other byte goes to the regex, whole: a letter or space beyond
//! ASCII can join what ASCII alone would cut.

use bpe_openai::Tokenizer;

/// Which of the two expressions to cut by: they differ in letters (o200k splits a word at a
/// change of case), contractions and what follows punctuation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pattern {
    O200k,
    Cl100k,
}

/// The pieces `text` is cut into, as `encoder`'s own pre-split cuts it.
pub(super) fn split<'a>(
    encoder: &'a Tokenizer,
    pattern: Pattern,
    text: &'a str,
) -> impl Iterator<Item = &'a str> + 'a {
    let ascii = text.is_ascii();
    let mut by_hand = ascii.then_some(Ascii { pattern, text: text.as_bytes(), at: 0, whole: text });
    let mut by_regex = (!ascii).then(|| encoder.split(text));
    std::iter::from_fn(move || match (&mut by_hand, &mut by_regex) {
        (Some(by_hand), _) => by_hand.next(),
        (None, Some(by_regex)) => by_regex.next(),
        (None, None) => None,
    })
}

/// `text` in lines the pre-split cuts as it cuts them within `text`, so that their pieces, one
/// line after another, are `text`'s: a cut after a line end where the next line starts with
/// an ASCII byte that is neither white space nor `/`. No piece runs on past such a point:
/// white space stops at what is not white space, a word or a contraction never holds a line
/// end, and only o200k's punctuation runs on past one, over line ends and slashes. A line
/// that starts otherwise stays with the one before it.
pub(super) fn lines(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let starts_a_line_of_its_own = |byte: u8| byte.is_ascii() && !is_space(byte) && byte != b'/';
    let mut ends = text
        .match_indices('\n')
        .map(|(at, _)| at + 1)
        .filter(move |&next| bytes.get(next).is_some_and(|&byte| starts_a_line_of_its_own(byte)));
    let mut start = 0;
    std::iter::from_fn(move || {
        if start == text.len() {
            return None;
        }
        let end = ends.next().unwrap_or(text.len());
        let line = &text[start..end];
        start = end;
        Some(line)
    })
}

/// The pieces of an ASCII text, from `at` on.
struct Ascii<'a> {
    pattern: Pattern,
    text: &'a [u8],
    at: usize,
    whole: &'a str,
}

impl<'a> Iterator for Ascii<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = &self.text[self.at..];
        if rest.is_empty() {
            return None;
        }
        let len = match self.pattern {
            Pattern::O200k => o200k(rest),
            Pattern::Cl100k => cl100k(rest),
        };
        let start = self.at;
        self.at += len;
        // Every byte is ASCII, so every offset is a character boundary.
        Some(&self.whole[start..self.at])
    }
}

/// What an ASCII byte is to the two expressions, as bits of [`KIND`]: its class is one
/// table load instead of a chain of comparisons, and each per-byte test below is one mask.
const SPACE: u8 = 1;
const NEWLINE: u8 = 2;
const UPPER: u8 = 4;
const LOWER: u8 = 8;
const DIGIT: u8 = 16;
const LETTER: u8 = UPPER | LOWER;

/// Each ASCII byte's kind; a byte with none of the bits is "other" (punctuation, controls).
static KIND: [u8; 128] = {
    let mut kind = [0u8; 128];
    let mut byte = 0;
    while byte < 128 {
        kind[byte] = match byte as u8 {
            // Unicode's White_Space within ASCII: tab, line feed, vertical tab, form feed,
            // carriage return, space (`u8::is_ascii_whitespace` leaves out the vertical tab).
            b'\n' | b'\r' => SPACE | NEWLINE,
            b'\t' | 0x0b | 0x0c | b' ' => SPACE,
            b'A'..=b'Z' => UPPER,
            b'a'..=b'z' => LOWER,
            b'0'..=b'9' => DIGIT,
            _ => 0,
        };
        byte += 1;
    }
    kind
};

/// The kind bits of `byte`, which is ASCII (the caller checked the whole text).
fn kind(byte: u8) -> u8 {
    KIND[usize::from(byte & 0x7f)]
}

fn is_space(byte: u8) -> bool {
    kind(byte) & SPACE != 0
}

fn is_newline(byte: u8) -> bool {
    kind(byte) & NEWLINE != 0
}

fn is_letter(byte: u8) -> bool {
    kind(byte) & LETTER != 0
}

/// `[^\s\p{L}\p{N}]`: neither space, letter nor digit.
fn is_other(byte: u8) -> bool {
    kind(byte) == 0
}

/// `[^\r\n\p{L}\p{N}]`: what may lead a word.
fn may_lead_a_word(byte: u8) -> bool {
    kind(byte) & (NEWLINE | LETTER | DIGIT) == 0
}

/// How many of `text`'s first bytes `accept` takes.
fn run(text: &[u8], accept: impl Fn(u8) -> bool) -> usize {
    text.iter().position(|byte| !accept(*byte)).unwrap_or(text.len())
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `text`'s start: its length, 0 for none.
fn contraction(text: &[u8]) -> usize {
    if text.first() != Some(&b'\'') {
        return 0;
    }
    let lower = |at: usize| text.get(at).map(u8::to_ascii_lowercase);
    match (lower(1), lower(2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => 2,
        (Some(b'r' | b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => 3,
        _ => 0,
    }
}

/// The first piece of `text` (not empty, all ASCII) under o200k's expression:
/// `[^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+(?i:'s|…)?` | `[^\r\n\p{L}\p{N}]?[\p{Lu}…]+[\p{Ll}…]*(?i:'s|…)?`
/// | `\p{N}{1,3}` | ` ?[^\s\p{L}\p{N}]+[\r\n/]*` | then the spaces' alternatives.
fn o200k(text: &[u8]) -> usize {
    let lead = usize::from(may_lead_a_word(text[0]) && text.get(1).is_some_and(|byte| is_letter(*byte)));
    let word = &text[lead..];
    if is_letter(word[0]) {
        // Upper case then lower case, either run possibly empty but not both; one of the
        // two alternatives takes exactly this.
        let upper = run(word, |byte| kind(byte) & UPPER != 0);
        let lower = run(&word[upper..], |byte| kind(byte) & LOWER != 0);
        let letters = upper + lower;
        return lead + letters + contraction(&word[letters..]);
    }
    digits_punctuation_or_spaces(text, |byte| is_newline(byte) || byte == b'/')
}

/// The first piece of `text` (not empty, all ASCII) under cl100k's expression:
/// `(?i:'s|…)` | `[^\r\n\p{L}\p{N}]?\p{L}+` | `\p{N}{1,3}` | ` ?[^\s\p{L}\p{N}]+[\r\n]*` |
/// then the spaces' alternatives.
fn cl100k(text: &[u8]) -> usize {
    let contracted = contraction(text);
    if contracted > 0 {
        return contracted;
    }
    let lead = usize::from(may_lead_a_word(text[0]) && text.get(1).is_some_and(|byte| is_letter(*byte)));
    let word = &text[lead..];
    if is_letter(word[0]) {
        return lead + run(word, is_letter);
    }
    digits_punctuation_or_spaces(text, is_newline)
}

/// The alternatives both expressions end with, after their words: `\p{N}{1,3}` |
/// ` ?[^\s\p{L}\p{N}]+` followed by what `trails` takes | `\s*[\r\n]+` | `\s+$` | `\s+(?!\S)` |
/// `\s+`. `text` does not start a word.
fn digits_punctuation_or_spaces(text: &[u8], trails: impl Fn(u8) -> bool) -> usize {
    if kind(text[0]) & DIGIT != 0 {
        return run(&text[..text.len().min(3)], |byte| kind(byte) & DIGIT != 0);
    }
    let space = usize::from(text[0] == b' ' && text.get(1).is_some_and(|byte| is_other(*byte)));
    let others = run(&text[space..], is_other);
    if others > 0 {
        let end = space + others;
        return end + run(&text[end..], trails);
    }
    // White space from here on: `text[0]` is neither a letter, a digit nor anything else.
    let spaces = run(text, is_space);
    debug_assert!(spaces > 0, "every ASCII byte is a letter, a digit, a space or other");
    if let Some(last_newline) = text[..spaces].iter().rposition(|byte| is_newline(*byte)) {
        return last_newline + 1;
    }
    if spaces == text.len() || spaces == 1 {
        return spaces;
    }
    // `\s+\s`, its last space given back: the next piece is that space and the word after.
    spaces - 1
}

#[cfg(test)]
mod tests {
    use super::{Pattern, lines, split};

    fn by_regex(pattern: Pattern, text: &str) -> Vec<&str> {
        encoder(pattern).split(text).collect()
    }

    fn by_hand(pattern: Pattern, text: &str) -> Vec<&str> {
        split(encoder(pattern), pattern, text).collect()
    }

    fn encoder(pattern: Pattern) -> &'static bpe_openai::Tokenizer {
        match pattern {
            Pattern::O200k => bpe_openai::o200k_base(),
            Pattern::Cl100k => bpe_openai::cl100k_base(),
        }
    }

    #[test]
    fn words_numbers_punctuation_and_spaces_are_cut_as_tiktoken_cuts_them() {
        let o200k = |text| by_hand(Pattern::O200k, text);
        let cl100k = |text| by_hand(Pattern::Cl100k, text);
        assert_eq!(o200k("Hello, world!"), ["Hello", ",", " world", "!"]);
        assert_eq!(
            o200k("fooBAR HTTPServer's  x\n\n  y  "),
            ["foo", "BAR", " HTTPServer's", " ", " x", "\n\n", " ", " y", "  "]
        );
        assert_eq!(cl100k("fooBAR HTTPServer's"), ["fooBAR", " HTTPServer", "'s"]);
        assert_eq!(o200k("12345 a/b//\n"), ["123", "45", " a", "/b", "//\n"]);
        assert_eq!(cl100k("a/b//\n"), ["a", "/b", "//\n"]);
        assert_eq!(o200k("it'S \"quoted\""), ["it'S", " \"", "quoted", "\""]);
        assert_eq!(o200k("\t\x0bx"), ["\t", "\x0bx"], "a vertical tab is white space and leads a word");
    }

    /// Deterministic: the same texts every run (xorshift from a fixed seed).
    struct Texts(u64);

    impl Texts {
        fn next_u64(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// A text of up to 40 bytes, mostly from the bytes that decide the cuts.
        fn text(&mut self) -> String {
            self.text_of(40)
        }

        /// A text of up to `longest` bytes, as [`Self::text`] makes them.
        fn text_of(&mut self, longest: u64) -> String {
            const TELLING: &[u8] = b"aZbY09 \t\n\r\x0b\x0c'sStTrReEvVmMlLdD/.,!-_\"";
            let len = (self.next_u64() % (longest + 1)) as usize;
            (0..len)
                .map(|_| {
                    let pick = self.next_u64();
                    if pick.is_multiple_of(8) {
                        char::from((pick >> 8) as u8 & 0x7f)
                    } else {
                        char::from(TELLING[(pick >> 8) as usize % TELLING.len()])
                    }
                })
                .collect()
        }
    }

    #[test]
    fn generated_ascii_text_is_cut_as_the_regexes_cut_it() {
        let mut texts = Texts(0x5eed_cafe_f00d_d00d);
        for _ in 0..100_000 {
            let text = texts.text();
            for pattern in [Pattern::O200k, Pattern::Cl100k] {
                assert_eq!(by_hand(pattern, &text), by_regex(pattern, &text), "{pattern:?} of {text:?}");
            }
        }
    }

    /// A text's lines, each cut alone, come to the text's own pieces: generated text with a
    /// line end in every few bytes, and real text (some of it beyond ASCII).
    #[test]
    fn a_text_cut_into_its_lines_is_cut_into_the_same_pieces() {
        let mut texts = Texts(0x0dd_ba11_5eed);
        let generated = (0..20_000).map(|_| texts.text_of(120));
        let real = [
            include_str!("presplit.rs"),
            include_str!("../../../../README.md"),
            "- [x] one\n- [ ] two\n\n## Next\n/path\n  indented\n\u{a0}no-break\nnaïve\r\nend.\n",
        ]
        .map(str::to_owned);
        let mut cut = 0;
        for text in generated.chain(real) {
            let parts: Vec<&str> = lines(&text).collect();
            assert_eq!(parts.concat(), text);
            cut += parts.len().saturating_sub(1);
            for pattern in [Pattern::O200k, Pattern::Cl100k] {
                let by_lines: Vec<&str> = parts.iter().flat_map(|line| by_regex(pattern, line)).collect();
                assert_eq!(by_lines, by_regex(pattern, &text), "{pattern:?} of {text:?} in {parts:?}");
            }
        }
        assert!(cut > 20_000, "texts were cut: {cut} cuts");
        assert_eq!(
            lines("- [x] one\n- [ ] two\n\n## Next\n/path\n  indented\n\u{a0}x\n\tx\nend")
                .collect::<Vec<_>>(),
            ["- [x] one\n", "- [ ] two\n\n", "## Next\n/path\n  indented\n\u{a0}x\n\tx\n", "end"]
        );
    }

    #[test]
    fn real_text_is_cut_as_the_regexes_cut_it_and_other_text_goes_to_them() {
        let sources = [
            include_str!("presplit.rs"),
            include_str!("../../../../README.md"),
            include_str!("../../../../Cargo.lock"),
            "{\"todos\":[{\"id\":1,\"text\":\"Write the parser\",\"status\":\"in_progress\"}]}",
            "naïve café — 東京 ＡＢＣ, and\u{a0}no-break\u{85}next",
        ];
        for source in sources {
            // Its ASCII lines alone, too: most of these files are ASCII but for a few lines.
            let ascii: String = source.split_inclusive('\n').filter(|line| line.is_ascii()).collect();
            assert!(ascii.len() > source.len() / 2 || source.len() < 200, "mostly ASCII");
            for (pattern, source) in [Pattern::O200k, Pattern::Cl100k]
                .into_iter()
                .flat_map(|pattern| [(pattern, source), (pattern, ascii.as_str())])
            {
                let (hand, regex) = (by_hand(pattern, source), by_regex(pattern, source));
                assert_eq!(hand.len(), regex.len(), "{pattern:?}: the number of pieces");
                for (at, (hand, regex)) in hand.iter().zip(&regex).enumerate() {
                    assert_eq!(hand, regex, "{pattern:?}: piece {at}");
                }
            }
        }
    }
}
