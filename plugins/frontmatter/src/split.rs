//! A file split into its YAML frontmatter (between a first line `---` and the next line `---`)
//! and its body. Only the split: what the frontmatter says is the reader's to judge.

/// The two parts of a file.
#[derive(Debug, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML between the `---` lines; its first line is the file's second.
    pub frontmatter: &'a str,
    /// Everything after the closing `---` line, without the blank lines that open it or the
    /// whitespace that ends it.
    pub body: &'a str,
}

/// Splits `text` (a whole file); the error says which rule of the format it breaks.
pub fn split(text: &str) -> Result<Split<'_>, String> {
    // Editors on Windows may save a byte-order mark; it is no part of the first line.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = Lines { text, at: 0 };
    let opens = lines.next().is_some_and(|(_, line)| is_fence(line));
    if !opens {
        return Err("it has no frontmatter: the file must begin with a `---` line, then its YAML fields \
                    (`name: ...` lines), then another `---` line"
            .to_owned());
    }
    let start = lines.at;
    while let Some((line_start, line)) = lines.next() {
        if is_fence(line) {
            let body = text[lines.at..].trim_start_matches(['\r', '\n']).trim_end();
            return Ok(Split { frontmatter: &text[start..line_start], body });
        }
    }
    Err("its frontmatter is not closed: no `---` line follows the opening one".to_owned())
}

/// A frontmatter fence: `---` alone on its line (trailing spaces and a `\r` allowed).
fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

/// The lines of a text with where each starts; `at` is where the next one starts.
struct Lines<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.text.len() {
            return None;
        }
        let start = self.at;
        let rest = &self.text[start..];
        let (line, taken) = match rest.find('\n') {
            Some(end) => (&rest[..end], end + 1),
            None => (rest, rest.len()),
        };
        self.at += taken;
        Some((start, line))
    }
}
