//! Text from a model, a tool or a plugin, made safe to put on a terminal.
//!
//! A terminal obeys the control characters in what it prints: ESC and CSI start sequences
//! that move the cursor, erase lines, hide text, retitle the window or write the clipboard
//! (OSC 52); a carriage return or backspaces overwrite what was printed; bidi overrides
//! reorder it. Such text could redraw an approval prompt to show another call than the one
//! asked about. So every character of that kind is shown as what it is (`\x1b`, `\r`,
//! `\u{202e}`) instead of being obeyed. Each character is escaped on its own, with no state
//! carried between pieces, so a sequence split across two streamed deltas is escaped as
//! surely as a whole one.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether line breaks and tabs pass through (multi-line text) or are escaped too (one-line
/// fields: a tool name, a list item's title, a reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    Keep,
    Escape,
}

/// `text` with every control character and bidi override shown visibly, `\n` and `\t` kept
/// when `lines` is [`Lines::Keep`].
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
        // Bidi embeddings and overrides (LRE, RLE, PDF, LRO, RLO) and isolates (LRI, RLI,
        // FSI, PDI).
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
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
