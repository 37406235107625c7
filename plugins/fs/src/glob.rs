//! Path globs: `*` and `?` stay within one path segment, `**` crosses segments.

/// True when the whole `path` (relative, `/`-separated) matches `pattern`.
pub fn matches(pattern: &str, path: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let path: Vec<char> = path.chars().collect();
    match_from(&pattern, &path)
}

fn match_from(pattern: &[char], path: &[char]) -> bool {
    match pattern.first() {
        None => path.is_empty(),
        Some('*') if pattern.get(1) == Some(&'*') => {
            // `**/` may also match nothing at all, so `**/a.rs` matches `a.rs`.
            let rest = &pattern[2..];
            let rest_after_slash = rest.strip_prefix(&['/']).unwrap_or(rest);
            (0..=path.len()).any(|i| match_from(rest, &path[i..]))
                || (rest.len() != rest_after_slash.len() && match_from(rest_after_slash, path))
        }
        Some('*') => {
            let rest = &pattern[1..];
            for i in 0..=path.len() {
                if match_from(rest, &path[i..]) {
                    return true;
                }
                if i < path.len() && path[i] == '/' {
                    break;
                }
            }
            false
        }
        Some('?') => path.first().is_some_and(|c| *c != '/') && match_from(&pattern[1..], &path[1..]),
        Some(c) => path.first() == Some(c) && match_from(&pattern[1..], &path[1..]),
    }
}
