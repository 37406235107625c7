//! Markdown of a reply, rendered for a terminal as it streams: each line is drawn once it is
//! complete (a table once its last row is), with the host's own styles; the line still
//! streaming is given as it stands ([`Markdown::partial`]) to be shown plain meanwhile. The
//! text is escaped by [`agent_host::sanitize`] before it gets here, and what the markdown parser
//! gives back is escaped again: the parser decodes character references (`&#x1b;`, `&#27;`,
//! `&#x9b;`, in text and in link destinations alike) into the characters themselves, which
//! would turn escaped text back into the sequences it spelled. So the only escape codes
//! written are these.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use agent_host::sanitize::one_line;

const BOLD: &str = "\x1b[1m";
const ITALIC: &str = "\x1b[3m";
const UNDERLINE: &str = "\x1b[4m";
const DIM: &str = "\x1b[2m";
const CODE: &str = "\x1b[36m";
const HEADING: &str = "\x1b[1;4;35m";
const RESET: &str = "\x1b[0m";

/// The state of one reply being rendered.
#[derive(Debug, Default)]
pub struct Markdown {
    /// Text after the last line break, not drawn yet.
    partial: String,
    /// Inside a fenced code block.
    in_code: bool,
    /// Rows of a table not finished yet.
    table: Vec<String>,
}

impl Markdown {
    /// The lines `text` (escaped) completes, rendered.
    pub fn push(&mut self, text: &str) -> Vec<String> {
        self.partial.push_str(text);
        let mut out = Vec::new();
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            self.line(line.trim_end_matches(['\n', '\r']), &mut out);
        }
        out
    }

    /// Whatever is left at the end of the reply, rendered; the state is reset for the next.
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        let rest = std::mem::take(&mut self.partial);
        if !rest.is_empty() {
            self.line(&rest, &mut out);
        }
        self.flush_table(&mut out);
        *self = Self::default();
        out
    }

    /// The line still streaming, not rendered yet (escaped text, no style of this file).
    pub fn partial(&self) -> &str {
        &self.partial
    }

    pub fn is_empty(&self) -> bool {
        self.partial.is_empty() && self.table.is_empty()
    }

    fn line(&mut self, line: &str, out: &mut Vec<String>) {
        let trimmed = line.trim_start();
        if let Some(fence) = trimmed.strip_prefix("```").or_else(|| trimmed.strip_prefix("~~~")) {
            self.flush_table(out);
            self.in_code = !self.in_code;
            let label = if self.in_code && !fence.trim().is_empty() {
                format!(" {} ", fence.trim())
            } else {
                String::new()
            };
            out.push(format!("{DIM}───{label}───{RESET}"));
            return;
        }
        if self.in_code {
            out.push(format!("{DIM}│{RESET} {CODE}{line}{RESET}"));
            return;
        }
        if trimmed.starts_with('|') {
            self.table.push(trimmed.to_owned());
            return;
        }
        self.flush_table(out);
        out.push(block(line));
    }

    fn flush_table(&mut self, out: &mut Vec<String>) {
        if self.table.is_empty() {
            return;
        }
        let rows: Vec<Vec<String>> = std::mem::take(&mut self.table)
            .iter()
            .filter(|row| !is_separator(row))
            .map(|row| cells(row))
            .collect();
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                rows.iter().filter_map(|row| row.get(c)).map(|cell| cell.chars().count()).max().unwrap_or(0)
            })
            .collect();
        for (index, row) in rows.iter().enumerate() {
            let drawn: Vec<String> = (0..columns)
                .map(|c| {
                    let cell = row.get(c).map_or("", String::as_str);
                    let pad = " ".repeat(widths[c] - cell.chars().count());
                    let text = inline(cell);
                    if index == 0 { format!("{BOLD}{text}{RESET}{pad}") } else { format!("{text}{pad}") }
                })
                .collect();
            out.push(drawn.join(&format!(" {DIM}│{RESET} ")));
            if index == 0 {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push(format!("{DIM}{}{RESET}", rule.join("─┼─")));
            }
        }
    }
}

/// One line outside code and tables: a heading, a list item, a quote, a rule, or a paragraph's line.
fn block(line: &str) -> String {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
        return format!("{HEADING}{}{RESET}", strip_styles(&inline(trimmed[hashes..].trim())));
    }
    if is_rule(trimmed) {
        return format!("{DIM}{}{RESET}", "─".repeat(40));
    }
    for bullet in ["- ", "* ", "+ "] {
        if let Some(item) = trimmed.strip_prefix(bullet) {
            return format!("{indent}• {}", inline(item));
        }
    }
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && (trimmed[digits..].starts_with(". ") || trimmed[digits..].starts_with(") ")) {
        return format!("{indent}{}. {}", &trimmed[..digits], inline(&trimmed[digits + 2..]));
    }
    if let Some(quote) = trimmed.strip_prefix('>') {
        return format!("{DIM}│ {}{RESET}", inline(quote.trim_start()));
    }
    format!("{indent}{}", inline(trimmed))
}

/// Emphasis, strong, code spans, links and strikethrough in one line of text.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut styles: Vec<&str> = Vec::new();
    let mut links: Vec<String> = Vec::new();
    let restyle = |out: &mut String, styles: &[&str]| {
        out.push_str(RESET);
        styles.iter().for_each(|style| out.push_str(style));
    };
    // Each piece the parser gives back is one line's: a line break a reference decodes to
    // (`&#10;`) is shown escaped too, so a reply cannot draw a line that looks like the host's.
    for event in Parser::new_ext(text, Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => out.push_str(&one_line(&text)),
            Event::Code(code) => {
                out.push_str(CODE);
                out.push_str(&one_line(&code));
                restyle(&mut out, &styles);
            }
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            Event::Rule => out.push_str(&"─".repeat(40)),
            Event::Start(Tag::Strong) => {
                styles.push(BOLD);
                out.push_str(BOLD);
            }
            Event::Start(Tag::Emphasis) => {
                styles.push(ITALIC);
                out.push_str(ITALIC);
            }
            Event::Start(Tag::Strikethrough) => {
                styles.push("\x1b[9m");
                out.push_str("\x1b[9m");
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                links.push(one_line(&dest_url).into_owned());
                styles.push(UNDERLINE);
                out.push_str(UNDERLINE);
            }
            Event::End(TagEnd::Strong | TagEnd::Emphasis | TagEnd::Strikethrough) => {
                styles.pop();
                restyle(&mut out, &styles);
            }
            Event::End(TagEnd::Link) => {
                styles.pop();
                restyle(&mut out, &styles);
                if let Some(url) = links.pop() {
                    out.push_str(&format!(" {DIM}({url}){RESET}"));
                    restyle(&mut out, &styles);
                }
            }
            _ => {}
        }
    }
    if !styles.is_empty() || out.contains('\x1b') {
        out.push_str(RESET);
    }
    out
}

fn is_rule(line: &str) -> bool {
    let line: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    line.len() >= 3 && ["-", "*", "_"].iter().any(|mark| line.chars().all(|c| c.to_string() == *mark))
}

fn is_separator(row: &str) -> bool {
    row.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

fn cells(row: &str) -> Vec<String> {
    let row = row.trim().trim_start_matches('|').trim_end_matches('|');
    row.split('|').map(|cell| cell.trim().to_owned()).collect()
}

/// `text` without the styles of this file, for a heading drawn in one style.
fn strip_styles(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            chars.by_ref().find(|c| *c == 'm');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: Vec<String>) -> Vec<String> {
        lines.iter().map(|line| strip_styles(line)).collect()
    }

    #[test]
    fn lines_are_drawn_as_they_complete_and_blocks_are_rendered() {
        let mut md = Markdown::default();
        assert!(md.push("# Ti").is_empty(), "half a line waits");
        assert_eq!(md.partial(), "# Ti", "and is there to show plain");
        assert_eq!(
            md.push("tle\nsome **bold** and `code`\n"),
            [
                format!("{HEADING}Title{RESET}"),
                format!("some {BOLD}bold{RESET} and {CODE}code{RESET}{RESET}"),
            ]
        );
        assert_eq!(
            plain(md.push("- one\n2. two\n```rust\nlet x = 1;\n```\n")),
            ["• one", "2. two", "─── rust ───", "│ let x = 1;", "──────",]
        );
        assert_eq!(
            plain(md.push("| a | bb |\n|---|---|\n| ccc | d |\n")),
            Vec::<String>::new(),
            "a table waits for its end"
        );
        assert_eq!(plain(md.push("after\n")), ["a   │ bb", "────┼───", "ccc │ d ", "after"]);
        assert_eq!(plain(md.finish()), Vec::<String>::new());
        assert_eq!(md.partial(), "");
        assert_eq!(plain(md.push("tail")), Vec::<String>::new());
        assert_eq!(plain(md.finish()), ["tail"]);
    }

    #[test]
    fn escaped_text_stays_escaped() {
        let mut md = Markdown::default();
        let escaped = agent_host::sanitize::multi_line("a \x1b[2J b\n").into_owned();
        let lines = md.push(&escaped);
        assert_eq!(lines, ["a \\x1b[2J b"]);
    }

    #[test]
    fn character_references_are_shown_escaped_not_decoded_into_controls() {
        let mut md = Markdown::default();
        // A title, the clipboard (OSC 52) and an erase, spelled as references in hex and
        // decimal; C1 CSI; a bidi override and a tag character; a line break.
        let reply = "t &#x1b;]0;TITLE&#x7; c &#27;]52;c;aGk=&#7; e &#x1B;[2J &#x9b;2J \
                     &#x202e;rev &#xe0041; one&#10;two\n";
        assert_eq!(
            md.push(&agent_host::sanitize::multi_line(reply)),
            [
                "t \\x1b]0;TITLE\\x07 c \\x1b]52;c;aGk=\\x07 e \\x1b[2J \\u{9b}2J \\u{202e}rev \\u{e0041} one\\ntwo"
            ]
        );
    }

    #[test]
    fn references_in_styled_text_code_links_headings_and_tables_stay_escaped() {
        let mut md = Markdown::default();
        let reply = "# head &#x1b;[2J\n\
                     **bold &#x1b;]0;x&#7;** `&#x1b;` [link &#x9b;2J](http://x/&#x1b;]0;y&#x7;)\n\
                     | a &#x9b;2J |\n|---|\n| b |\n\
                     end\n";
        let lines = md.push(&agent_host::sanitize::multi_line(reply));
        assert_eq!(
            plain(lines.clone()),
            [
                "head \\x1b[2J",
                "bold \\x1b]0;x\\x07 &#x1b; link \\u{9b}2J (http://x/\\x1b]0;y\\x07)",
                "a \\u{9b}2J",
                "──────────",
                "b         ",
                "end",
            ]
        );
        // Nothing but this file's own styles: every escape code is one of them.
        let styles = [BOLD, ITALIC, UNDERLINE, DIM, CODE, HEADING, RESET, "\x1b[9m"];
        for line in &lines {
            let mut rest = line.as_str();
            while let Some(at) = rest.find('\x1b') {
                rest = &rest[at..];
                let style = styles.iter().find(|style| rest.starts_with(**style));
                assert!(style.is_some(), "a code not of this file in {line:?}");
                rest = &rest[style.map_or(1, |style| style.len())..];
            }
            assert!(!line.contains(['\x07', '\u{9b}', '\u{202e}']), "{line:?}");
        }
    }
}
