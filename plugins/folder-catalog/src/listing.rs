//! The catalog as the system prompt lists it: how to use it, then each entry on a line of its
//! own while the budget lasts, the rest by name only.

use std::fmt::Write as _;

/// `intro`, then each of `entries` (a name, and its description on one line) as
/// ``- `name`: description``, until the text would pass `budget` bytes; the rest by name only
/// after `more`, a name being enough to use an entry by. None without entries: the system
/// prompt says nothing of an empty catalog.
pub fn budgeted_listing<'a>(
    intro: &str,
    entries: impl IntoIterator<Item = (&'a str, String)>,
    budget: usize,
    more: &str,
) -> Option<String> {
    let mut entries = entries.into_iter().peekable();
    entries.peek()?;
    let mut text = intro.to_owned();
    let mut by_name_only = Vec::new();
    for (name, description) in entries {
        let line = format!("- `{name}`: {description}\n");
        // Once one entry is by name only, the rest are too, so the list keeps its order.
        if by_name_only.is_empty() && text.len() + line.len() <= budget {
            text.push_str(&line);
        } else {
            by_name_only.push(format!("`{name}`"));
        }
    }
    if !by_name_only.is_empty() {
        let _ = writeln!(text, "{more}{}", by_name_only.join(", "));
    }
    Some(text)
}
