//! Tool calls drawn as cards at a terminal: one line per call with the argument that
//! matters, its result as one line (first line, size) instead of the raw text, each fitted
//! to the columns it has.

use serde_json::Value;

use super::width::{fit, width};
use agent_host::sanitize::one_line;

/// The arguments most tools are about, in the order one is picked.
const KEY_ARGUMENTS: &[&str] =
    &["command", "cmd", "path", "file", "file_path", "pattern", "query", "url", "title"];

/// Characters of an argument or a result's first line looked at: more than any terminal
/// shows on a line, so a large one is not escaped whole only to be cut.
const SCANNED: usize = 1_000;

/// `name  argument` for a call, in at most `columns`.
pub fn call_line(name: &str, arguments: &Value, columns: usize) -> String {
    let line = match key_argument(arguments) {
        Some(argument) => format!("{}  {}", one_line(name), argument),
        None => one_line(name).into_owned(),
    };
    fit(&line, columns)
}

/// The argument a person wants to see: a known key's text, else the first text, else a count
/// of what a list holds, else the arguments as compact JSON; escaped and cut.
fn key_argument(arguments: &Value) -> Option<String> {
    let Value::Object(fields) = arguments else {
        return (!arguments.is_null()).then(|| cut(&arguments.to_string()));
    };
    let text = KEY_ARGUMENTS
        .iter()
        .find_map(|key| fields.get(*key).and_then(Value::as_str))
        .or_else(|| fields.values().find_map(Value::as_str));
    if let Some(text) = text {
        return Some(cut(text));
    }
    if let Some((key, Value::Array(items))) = fields.iter().find(|(_, value)| value.is_array()) {
        return Some(format!("{}: {}", one_line(key), count(items.len(), "item")));
    }
    (!fields.is_empty()).then(|| cut(&arguments.to_string()))
}

/// `first line · 12 lines, 3.4 kB` for a result, in at most `columns`: the first line is
/// cut so that the size stays.
pub fn result_line(output: &str, columns: usize) -> String {
    let first = output.lines().find(|line| !line.trim().is_empty()).unwrap_or("(empty)");
    let lines = output.lines().count();
    let size = if lines > 1 {
        format!("{}, {}", count(lines, "line"), bytes(output.len()))
    } else {
        bytes(output.len())
    };
    let size = format!(" · {size}");
    let first = fit(&cut(first.trim()), columns.saturating_sub(width(&size)).max(1));
    fit(&format!("{first}{size}"), columns)
}

/// `text` escaped onto one line, at most [`SCANNED`] characters of it.
fn cut(text: &str) -> String {
    match text.char_indices().nth(SCANNED) {
        Some((end, _)) => format!("{}…", one_line(&text[..end])),
        None => one_line(text).into_owned(),
    }
}

fn count(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

fn bytes(n: usize) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.1} kB", n as f64 / 1e3),
        _ => format!("{:.1} MB", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_shows_the_argument_that_matters() {
        let call = |name, arguments| call_line(name, &arguments, 80);
        assert_eq!(call("run", json!({"timeout": 5, "command": "ls -la\nrm x"})), "run  ls -la\\nrm x");
        assert_eq!(call("note", json!({"n": 1, "text": "hello"})), "note  hello");
        assert_eq!(call("plan", json!({"todos": [{"id": 1}, {"id": 2}]})), "plan  todos: 2 items");
        assert_eq!(call("add", json!({"a": 1})), "add  {\"a\":1}");
        assert_eq!(call("now", json!({})), "now");
        assert_eq!(call("x\x1b[2J", json!(null)), "x\\x1b[2J");
        let long = json!({"command": "z".repeat(5_000)});
        assert_eq!(call_line("run", &long, 40), format!("run  {}…", "z".repeat(34)));
    }

    #[test]
    fn a_result_is_its_first_line_and_its_size_in_the_columns_given() {
        assert_eq!(result_line("done", 80), "done · 4 B");
        assert_eq!(result_line("\nfirst\nsecond\n", 80), "first · 3 lines, 14 B");
        let long = format!("{}\n", "y".repeat(2_000));
        assert_eq!(result_line(&long, 60), format!("{}… · 2.0 kB", "y".repeat(50)));
        assert_eq!(width(&result_line(&long, 60)), 60);
        assert_eq!(result_line("", 80), "(empty) · 0 B");
    }
}
