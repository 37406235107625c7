//! A session as a listing shows it: what tells one apart from the others, read from the store
//! without loading its history.

use crate::sanitize::one_line;

/// How many characters of the first prompt a title keeps.
pub const TITLE_CHARS: usize = 80;

/// One session of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEntry {
    pub id: String,
    /// When a turn last started in it (when it was made, before one), unix seconds.
    pub updated_at: i64,
    /// Its first prompt, as a title (`title`); `None` before the first.
    pub title: Option<String>,
    /// The messages of its history.
    pub messages: u64,
    /// Whether a process holds its lease now (this one or another host): where hosts take a
    /// session only while they use it, a session in use.
    pub held: bool,
}

/// A prompt as a title: on one line (every run of white space one space), control
/// characters shown escaped, cut after [`TITLE_CHARS`] characters with `…`.
pub fn title(prompt: &str) -> String {
    let flat = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
    let escaped = one_line(&flat);
    match escaped.char_indices().nth(TITLE_CHARS) {
        Some((end, _)) => format!("{}…", escaped[..end].trim_end()),
        None => escaped.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_one_escaped_line_cut_with_an_ellipsis() {
        assert_eq!(title("  fix the\n\tbuild  please "), "fix the build please");
        assert_eq!(title("red \x1b[31m text"), "red \\x1b[31m text");
        let long = "word ".repeat(40);
        let cut = title(&long);
        assert_eq!(cut, format!("{}…", "word ".repeat(16).trim_end()), "cut, no space before the `…`");
        assert_eq!(title(""), "");
    }
}
