//! The terminal's width, and text fitted to it. The width is asked each time a line is drawn,
//! so a window resized between two lines gets the next one at its new width.

use unicode_width::UnicodeWidthChar;

/// The width assumed when the terminal does not say.
const FALLBACK_COLUMNS: usize = 100;
/// The narrowest width a line is fitted to, however narrow the terminal says it is.
const MIN_COLUMNS: usize = 20;

/// The terminal's width in columns now (only asked at a terminal: elsewhere crossterm would
/// start `tput` to find out).
pub fn columns() -> usize {
    match crossterm::terminal::size() {
        Ok((columns, _)) if columns > 0 => usize::from(columns).max(MIN_COLUMNS),
        _ => FALLBACK_COLUMNS,
    }
}

/// How many columns `text` (escaped: no control characters) takes.
pub fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `text` cut to `columns`, its last column then `…` when it did not fit.
pub fn fit(text: &str, columns: usize) -> String {
    if width(text) <= columns {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > columns {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// The end of `text` in at most `columns`: `…` then its last characters when it is wider;
/// a tab shown as one space. Only the end is looked at, so a long line streaming in many
/// pieces costs each piece the width of the screen, not its length.
pub fn tail(text: &str, columns: usize) -> String {
    let mut kept = Vec::new();
    let mut used = 0;
    let mut chars = text.chars().rev().map(|c| if c == '\t' { ' ' } else { c });
    for c in chars.by_ref() {
        let w = c.width().unwrap_or(0);
        if used + w > columns {
            // Room for the `…` in place of what does not fit.
            while used + 1 > columns {
                let Some(dropped) = kept.pop() else { break };
                used -= UnicodeWidthChar::width(dropped).unwrap_or(0);
            }
            kept.push('…');
            break;
        }
        kept.push(c);
        used += w;
    }
    kept.into_iter().rev().collect()
}

/// `text` (one line) broken into lines of at most `columns`, every line after the first
/// starting with `indent` spaces: nothing of it is left out.
pub fn wrap(text: &str, columns: usize, indent: usize) -> Vec<String> {
    let indent = indent.min(columns / 2);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > columns && used > indent {
            lines.push(std::mem::take(&mut line));
            line.push_str(&" ".repeat(indent));
            used = indent;
        }
        line.push(c);
        used += w;
    }
    lines.push(line);
    lines
}

/// Prose (one line) broken into lines of at most `columns` between words, every line after
/// the first starting with `indent` spaces; a word wider than a line is broken where it
/// must be ([`wrap`]). The spaces a line breaks at are dropped; nothing else is.
pub fn wrap_words(text: &str, columns: usize, indent: usize) -> Vec<String> {
    let indent = indent.min(columns / 2);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    // No word on the line yet: the next goes on it whatever its width.
    let mut fresh = true;
    for word in text.split(' ') {
        let w = width(word);
        if !fresh && used + 1 + w > columns {
            lines.push(std::mem::replace(&mut line, " ".repeat(indent)));
            used = indent;
            fresh = true;
        }
        if !fresh {
            line.push(' ');
            used += 1;
        }
        fresh = false;
        if used + w > columns {
            // Too wide for any line: broken by characters, its end going on.
            let mut pieces = wrap(&format!("{line}{word}"), columns, indent);
            line = pieces.pop().unwrap_or_default();
            used = width(&line);
            lines.extend(pieces);
            continue;
        }
        line.push_str(word);
        used += w;
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_too_wide_is_cut_with_an_ellipsis_in_its_last_column() {
        assert_eq!(fit("short", 10), "short");
        assert_eq!(fit("exactly 10", 10), "exactly 10");
        assert_eq!(fit("one column more", 10), "one colum…");
        assert_eq!(width(&fit("one column more", 10)), 10);
        // Wide characters take two columns each.
        assert_eq!(fit("日本語のテキスト", 7), "日本語…");
        assert_eq!(width("日本語…"), 7);
    }

    #[test]
    fn a_tail_too_wide_keeps_its_end() {
        assert_eq!(tail("short", 10), "short");
        assert_eq!(tail("the line goes on", 10), "…e goes on");
        assert_eq!(tail("exactly 10", 10), "exactly 10");
        assert_eq!(width(&tail("日本語のテキスト", 7)), 7);
        assert_eq!(tail("日本語のテキスト", 7), "…キスト");
        assert_eq!(tail("a\tb", 10), "a b");
    }

    #[test]
    fn a_wrapped_line_keeps_every_character_and_indents_what_follows() {
        assert_eq!(wrap("abcdefghij", 4, 1), ["abcd", " efg", " hij"]);
        assert_eq!(wrap("fits", 4, 2), ["fits"]);
        let long = "x".repeat(100);
        let lines = wrap(&long, 30, 13);
        assert!(lines.iter().all(|line| width(line) <= 30), "{lines:?}");
        assert_eq!(lines.concat().replace(' ', ""), long);
    }

    #[test]
    fn prose_breaks_between_words_and_only_a_word_too_wide_is_cut() {
        let text = "the operator reads this reason whole, broken between its words";
        let lines = wrap_words(text, 20, 2);
        assert_eq!(lines, ["the operator reads", "  this reason whole,", "  broken between its", "  words"]);
        assert!(lines.iter().all(|line| width(line) <= 20), "{lines:?}");
        assert_eq!(lines.iter().map(|line| line.trim()).collect::<Vec<_>>().join(" "), text);
        assert_eq!(wrap_words("fits", 10, 2), ["fits"]);
        let long = format!("a {} b", "x".repeat(25));
        let lines = wrap_words(&long, 10, 0);
        assert!(lines.iter().all(|line| width(line) <= 10), "{lines:?}");
        assert_eq!(lines.concat().replace(' ', ""), long.replace(' ', ""));
    }
}
