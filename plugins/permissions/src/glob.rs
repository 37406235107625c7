//! Globs for tool names and command patterns: the path rules' matcher (`*` any run of
//! characters, `?` one), plus prefix matching for commands that take more arguments.

pub use workspace_path::glob_match;

/// True when some text that starts with `text` matches `pattern`.
pub fn glob_prefix_match(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    // Any pattern left once the text is used up can still be matched by more text.
    fn from(pattern: &[char], text: &[char]) -> bool {
        match (pattern.first(), text.first()) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some('*'), Some(_)) => from(&pattern[1..], text) || from(pattern, &text[1..]),
            (Some(p), Some(t)) => (*p == '?' || p == t) && from(&pattern[1..], &text[1..]),
        }
    }
    from(&pattern, &text)
}

/// True when the pattern has glob characters (otherwise command patterns match as prefixes).
pub fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?'])
}
