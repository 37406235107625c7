//! Where a field is in the config text, read from the TOML document's spans: the line of a
//! dotted field (`plugin[1].limits.memory_mb`), and the dotted field at a byte offset (where
//! serde's complaint points). The one locator every error that names a line goes through.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

/// The 1-based line holding byte `offset` of `text`.
pub(super) fn line_at(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset].iter().filter(|&&byte| byte == b'\n').count() + 1
}

/// The line of the value at a dotted `field`, for errors about values that serde accepted but
/// the host does not. A value in an inline table (`limits = { memory_mb = 0 }`) or under
/// another table than the first with that key is found where it is; `None` when the text does
/// not set it. A segment may be quoted (`dirs."/data.d"`) and may name an entry of an array of
/// tables (`plugin[2]`), which is found at its `[[plugin]]` header.
pub(super) fn line_of_field(text: &str, field: &str) -> Option<usize> {
    let segments = segments(field)?;
    let (document, _) = DeTable::parse_recoverable(text);
    let mut table = document.get_ref();
    let mut rest = segments.iter().peekable();
    while let Some((key, index)) = rest.next() {
        let (_, mut value) = table.iter().find(|(name, _)| name.get_ref() == key)?;
        if let Some(index) = index {
            let DeValue::Array(items) = value.get_ref() else { return None };
            value = items.get(*index)?;
        }
        if rest.peek().is_none() {
            return Some(line_at(text, value.span().start));
        }
        let DeValue::Table(inner) = value.get_ref() else { return None };
        table = inner;
    }
    None
}

/// The dotted field at byte `offset`: the deepest key, value or `[[array]]` entry whose span
/// holds it (`plugin[1].limits.timeout_ms`). Read from what the parser recovered, so a
/// syntax error names the field around it when there is one.
pub(super) fn field_at(text: &str, offset: usize) -> Option<String> {
    let (document, _) = DeTable::parse_recoverable(text);
    let mut path = Vec::new();
    if find(document.get_ref(), offset, &mut path) {
        return Some(path.join("."));
    }
    // Nothing recovered holds it (a duplicate key is dropped): the table it is under.
    let mut under = None;
    last_table_before(document.get_ref(), offset, &mut path, &mut under);
    under.map(|(_, path)| path)
}

/// The table whose header is the last to start at or before `offset`, as its start and path.
fn last_table_before(
    table: &DeTable<'_>,
    offset: usize,
    path: &mut Vec<String>,
    under: &mut Option<(usize, String)>,
) {
    let consider = |start: usize, path: &[String], under: &mut Option<(usize, String)>| {
        if start <= offset && under.as_ref().is_none_or(|(best, _)| start > *best) {
            *under = Some((start, path.join(".")));
        }
    };
    for (key, value) in table.iter() {
        let segment = quoted(key.get_ref());
        match value.get_ref() {
            DeValue::Table(inner) => {
                path.push(segment);
                consider(value.span().start, path, under);
                last_table_before(inner, offset, path, under);
                path.pop();
            }
            DeValue::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    let DeValue::Table(inner) = item.get_ref() else { continue };
                    path.push(format!("{segment}[{index}]"));
                    consider(item.span().start, path, under);
                    last_table_before(inner, offset, path, under);
                    path.pop();
                }
            }
            _ => {}
        }
    }
}

/// Pushes onto `path` the segments leading to `offset` in `table`; false when none holds it.
fn find(table: &DeTable<'_>, offset: usize, path: &mut Vec<String>) -> bool {
    for (key, value) in table.iter() {
        let segment = quoted(key.get_ref());
        match value.get_ref() {
            DeValue::Table(inner) => {
                path.push(segment);
                if find(inner, offset, path) || holds(key.span(), offset) || holds(value.span(), offset) {
                    return true;
                }
                path.pop();
            }
            DeValue::Array(items) => {
                // An entry of an array of tables is named by its index; a value in an array
                // of values, by the array's key.
                for (index, item) in items.iter().enumerate() {
                    let DeValue::Table(inner) = item.get_ref() else { continue };
                    path.push(format!("{segment}[{index}]"));
                    if find(inner, offset, path) || holds(item.span(), offset) {
                        return true;
                    }
                    path.pop();
                }
                if holds(key.span(), offset) || holds(value.span(), offset) {
                    path.push(segment);
                    return true;
                }
            }
            _ if holds(key.span(), offset) || holds(value.span(), offset) => {
                path.push(segment);
                return true;
            }
            _ => {}
        }
    }
    false
}

fn holds(span: Range<usize>, offset: usize) -> bool {
    span.contains(&offset)
}

/// A key as a dotted path shows it: bare when TOML would take it bare, else quoted.
fn quoted(key: &str) -> String {
    let bare = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { key.to_owned() } else { format!("\"{key}\"") }
}

/// A dotted field's segments, each a key and the array index it names, if any. `None` when
/// the field is not one this module writes.
fn segments(field: &str) -> Option<Vec<(&str, Option<usize>)>> {
    let mut segments = Vec::new();
    let mut rest = field;
    loop {
        let (key, after) = match rest.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted.find('"')?;
                (&quoted[..end], &quoted[end + 1..])
            }
            None => {
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            }
        };
        let (index, after) = match after.strip_prefix('[') {
            Some(indexed) => {
                let end = indexed.find(']')?;
                (Some(indexed[..end].parse().ok()?), &indexed[end + 1..])
            }
            None => (None, after),
        };
        segments.push((key, index));
        match after.strip_prefix('.') {
            Some(next) => rest = next,
            None if after.is_empty() => return Some(segments),
            None => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_is_found_where_it_is_set_whatever_its_spelling() {
        let text = "[runtime.limits]\nmemory_mb = 64\n\n[[plugin]]\npath = \"a\"\n[[plugin]]\npath = \"b\"\nlimits = { timeout_ms = 5 }\n[plugin.grants.dirs]\n\"/data.d\" = { host = \"d\" }\n";
        assert_eq!(line_of_field(text, "runtime.limits.memory_mb"), Some(2));
        assert_eq!(line_of_field(text, "plugin[0]"), Some(4));
        assert_eq!(line_of_field(text, "plugin[1].path"), Some(7));
        assert_eq!(line_of_field(text, "plugin[1].limits.timeout_ms"), Some(8));
        assert_eq!(line_of_field(text, "plugin[1].grants.dirs.\"/data.d\""), Some(10));
        assert_eq!(line_of_field(text, "plugin[0].limits.timeout_ms"), None);
        assert_eq!(line_of_field(text, "plugin[2]"), None);
        assert_eq!(line_of_field(text, "plugin[x]"), None, "not a field this module writes");
    }

    #[test]
    fn the_field_at_an_offset_is_the_deepest_that_holds_it() {
        let text = "top = 1\n[[plugin]]\npath = \"a\"\n[[plugin]]\npath = \"b\"\n[plugin.limits]\ntimeout_ms = \"soon\"\n[plugin.grants.dirs]\n\"/w\" = { host = \"w\" }\n";
        let at = |needle: &str| field_at(text, text.find(needle).expect("in the text"));
        assert_eq!(at("top").as_deref(), Some("top"));
        assert_eq!(at("\"soon\"").as_deref(), Some("plugin[1].limits.timeout_ms"));
        assert_eq!(at("timeout_ms").as_deref(), Some("plugin[1].limits.timeout_ms"));
        assert_eq!(at("\"b\"").as_deref(), Some("plugin[1].path"));
        // A `[[plugin]]` header names its entry (a missing field is reported there), and a
        // header's last key the table it opens.
        let second = text.match_indices("[[plugin]]").nth(1).map(|(offset, _)| offset);
        assert_eq!(second.and_then(|offset| field_at(text, offset)).as_deref(), Some("plugin[1]"));
        assert_eq!(at("limits]").as_deref(), Some("plugin[1].limits"));
        assert_eq!(at("host").as_deref(), Some("plugin[1].grants.dirs.\"/w\".host"));
        assert_eq!(field_at(text, text.find('\n').expect("a newline")), None, "between fields");
    }

    #[test]
    fn a_syntax_error_still_names_the_field_around_it() {
        let text = "[agent]\nmax_iterations = 3\n[model]\nmodel = \"m\"\nmodel = \"n\"\n";
        let offset = text.rfind("model").expect("the duplicate");
        assert_eq!(line_at(text, offset), 5);
        assert_eq!(field_at(text, offset).as_deref(), Some("model"), "the duplicate is not in the tree");
        let text = "[[plugin]]\npath = \"a\"\n[[plugin]]\npath = \"b\"\npath = \"c\"\n";
        assert_eq!(field_at(text, text.rfind("path").expect("the duplicate")).as_deref(), Some("plugin[1]"));
    }
}
