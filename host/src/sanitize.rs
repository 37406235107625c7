//! Text from a model, a tool or a plugin, made safe to put on a terminal.
//!
//! A terminal obeys the control characters in what it prints: ESC and CSI start sequences
//! that move the cursor, erase lines, hide text, retitle the window or write the clipboard
//! (OSC 52); a carriage return or backspaces overwrite what was printed; bidi overrides
//! reorder it. Such text could redraw an approval prompt to show another call than the one
//! asked about. Format characters (Unicode's general category Cf) are as bad in another way:
//! bidi marks reorder, zero-width ones and the tag characters (U+E0000..U+E007F) are not seen
//! at all, yet a model reads them, so a file or a tool's output can carry instructions an
//! operator never sees ("ASCII smuggling"). So every character of those kinds is shown as
//! what it is (`\x1b`, `\r`, `\u{202e}`, `\u{e0041}`) instead of being obeyed or hidden:
//! the whole category, not a list of the ones known to be abused, so a character Unicode
//! adds to it later is escaped too once the tables know it (an emoji joined with U+200D then
//! shows as its parts around `\u{200d}`: the price of seeing every invisible character). The
//! web page escapes the same set (`serve/page/app.js`). Each character is escaped on its own,
//! with no state carried between pieces, so a sequence split across two streamed deltas is
//! escaped as surely as a whole one.

use std::borrow::Cow;
use std::fmt::Write as _;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory as _};

/// Whether line breaks and tabs pass through (multi-line text) or are escaped too (one-line
/// fields: a tool name, a list item's title, a reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    Keep,
    Escape,
}

/// `text` with every control and format character shown visibly, `\n` and `\t` kept when
/// `lines` is [`Lines::Keep`].
pub fn escape_controls(text: &str, lines: Lines) -> Cow<'_, str> {
    if !text.chars().any(|c| needs_escape(c, lines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs_escape(c, lines) {
            out.push(c);
            continue;
        }
        let _ = match c {
            '\n' => write!(out, "\\n"),
            '\t' => write!(out, "\\t"),
            '\r' => write!(out, "\\r"),
            c if (c as u32) < 0x80 => write!(out, "\\x{:02x}", c as u32),
            c => write!(out, "\\u{{{:x}}}", c as u32),
        };
    }
    Cow::Owned(out)
}

/// One-line text: [`escape_controls`] with line breaks escaped too.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape_controls(text, Lines::Escape)
}

/// Multi-line text: [`escape_controls`] keeping `\n` and `\t`.
pub fn multi_line(text: &str) -> Cow<'_, str> {
    escape_controls(text, Lines::Keep)
}

fn needs_escape(c: char, lines: Lines) -> bool {
    match c {
        '\n' | '\t' => lines == Lines::Escape,
        // C0, DEL and C1 (CSI is U+009B, OSC U+009D).
        c if c.is_control() => true,
        // No other ASCII character needs it: the common case skips the table.
        c if c.is_ascii() => false,
        // The line and paragraph separators start a new line in some terminals and editors,
        // as `\n` would; the page escapes them too.
        '\u{2028}' | '\u{2029}' => true,
        // The tag block whole, its unassigned code points too: they are invisible wherever a
        // later Unicode assigns them.
        '\u{e0000}'..='\u{e007f}' => true,
        // Bidi embeddings, overrides, isolates and marks, zero-width characters, the BOM,
        // invisible operators, tags: every format character.
        c => c.general_category() == GeneralCategory::Format,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_are_shown_not_obeyed() {
        let hostile =
            "a\x1b]0;pwned\x07b\x1b[2A\x1b[2Kc\x1b[8mhidden\x1b]52;c;ZWNobw==\x07\rover\x08\x7f\u{9b}2J";
        let shown = one_line(hostile);
        assert_eq!(
            shown,
            "a\\x1b]0;pwned\\x07b\\x1b[2A\\x1b[2Kc\\x1b[8mhidden\\x1b]52;c;ZWNobw==\\x07\\rover\\x08\\x7f\\u{9b}2J"
        );
        assert!(!shown.chars().any(char::is_control));
    }

    #[test]
    fn bidi_overrides_and_isolates_are_shown() {
        assert_eq!(one_line("x\u{202e}y\u{2066}z\u{2069}"), "x\\u{202e}y\\u{2066}z\\u{2069}");
        assert_eq!(one_line("\u{202a}\u{202d}\u{2067}\u{2068}"), "\\u{202a}\\u{202d}\\u{2067}\\u{2068}");
    }

    #[test]
    fn bidi_marks_zero_width_characters_and_the_bom_are_shown() {
        // LRM, RLM, ALM; ZWSP, ZWNJ, ZWJ, word joiner, BOM; soft hyphen, invisible times,
        // Mongolian vowel separator.
        assert_eq!(one_line("a\u{200e}b\u{200f}c\u{61c}d"), "a\\u{200e}b\\u{200f}c\\u{61c}d");
        assert_eq!(
            multi_line("ig\u{200b}nore\u{200c}\u{200d}all\u{2060}previous\u{feff}"),
            "ig\\u{200b}nore\\u{200c}\\u{200d}all\\u{2060}previous\\u{feff}"
        );
        assert_eq!(one_line("\u{ad}\u{2062}\u{180e}"), "\\u{ad}\\u{2062}\\u{180e}");
        assert_eq!(multi_line("one\u{2028}two\u{2029}"), "one\\u{2028}two\\u{2029}");
    }

    #[test]
    fn tag_characters_are_shown_whether_assigned_or_not() {
        // "Hi" spelled in tags (U+E0048 U+E0069) after the language tag U+E0001, then the
        // cancel tag and two code points of the block Unicode has not assigned.
        let smuggled = "ok\u{e0001}\u{e0048}\u{e0069}\u{e007f}\u{e0000}\u{e0002}";
        assert_eq!(multi_line(smuggled), "ok\\u{e0001}\\u{e0048}\\u{e0069}\\u{e007f}\\u{e0000}\\u{e0002}");
    }

    #[test]
    fn visible_characters_of_every_kind_pass() {
        // Letters of several scripts, Arabic and Hebrew themselves (only the marks and
        // overrides are escaped), a combining accent, a no-break space, a variation
        // selector, private use, symbols and emoji.
        let text =
            "café naïve Ωμέγα кирилица 漢字 かな 한글 عربي עברית e\u{301} a\u{a0}b \u{fe0f}\u{e000} → ✓ 🦀";
        assert!(matches!(multi_line(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn line_breaks_and_tabs_stay_in_multi_line_text_only() {
        assert_eq!(multi_line("one\n\ttwo\r\n"), "one\n\ttwo\\r\n");
        assert_eq!(one_line("one\n\ttwo"), "one\\n\\ttwo");
    }

    #[test]
    fn plain_text_is_borrowed_untouched() {
        let text = "ordinary text, ünïcödé and emoji 🦀 — with \"quotes\" and \\ backslashes";
        assert!(matches!(multi_line(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn a_sequence_split_across_pieces_is_escaped_in_each() {
        let pieces = ["before \x1b", "[2A\x1b]", "0;title\x07 after"];
        let joined: String = pieces.iter().map(|piece| multi_line(piece)).collect();
        assert!(!joined.contains('\x1b') && !joined.contains('\x07'), "{joined}");
        assert_eq!(joined, "before \\x1b[2A\\x1b]0;title\\x07 after");
    }
}
