//! Tool calls drawn as cards at a terminal: one line per call with the argument that
//! matters, its result as one line (first line, size) instead of the raw text.

use serde_json::Value;

use crate::sanitize::one_line;

/// The arguments most tools are about, in the order one is picked.
const KEY_ARGUMENTS: &[&str] =
    &["command", "cmd", "path", "file", "file_path", "pattern", "query", "url", "title"];

/// Characters of an argument or a result's first line shown.
const SHOWN: usize = 100;

/// `name  argument` for a call.
pub fn call_line(name: &str, arguments: &Value) -> String {
    match key_argument(arguments) {
        Some(argument) => format!("{}  {}", one_line(name), argument),
        None => one_line(name).into_owned(),
    }
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

/// `first line · 12 lines, 3.4 kB` for a result.
pub fn result_line(output: &str) -> String {
    let first = output.lines().find(|line| !line.trim().is_empty()).unwrap_or("(empty)");
    let lines = output.lines().count();
    let size = if lines > 1 {
        format!("{}, {}", count(lines, "line"), bytes(output.len()))
    } else {
        bytes(output.len())
    };
    format!("{} · {size}", cut(first.trim()))
}

fn cut(text: &str) -> String {
    let flat = one_line(text);
    if flat.chars().count() <= SHOWN {
        flat.into_owned()
    } else {
        format!("{}…", flat.chars().take(SHOWN).collect::<String>())
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
        assert_eq!(call_line("run", &json!({"timeout": 5, "command": "ls -la\nrm x"})), "run  ls -la\\nrm x");
        assert_eq!(call_line("note", &json!({"n": 1, "text": "hello"})), "note  hello");
        assert_eq!(call_line("plan", &json!({"todos": [{"id": 1}, {"id": 2}]})), "plan  todos: 2 items");
        assert_eq!(call_line("add", &json!({"a": 1})), "add  {\"a\":1}");
        assert_eq!(call_line("now", &json!({})), "now");
        assert_eq!(call_line("x\x1b[2J", &json!(null)), "x\\x1b[2J");
    }

    #[test]
    fn a_result_is_its_first_line_and_its_size() {
        assert_eq!(result_line("done"), "done · 4 B");
        assert_eq!(result_line("\nfirst\nsecond\n"), "first · 3 lines, 14 B");
        let long = format!("{}\n", "y".repeat(2_000));
        assert_eq!(result_line(&long), format!("{}… · 2.0 kB", "y".repeat(SHOWN)));
        assert_eq!(result_line(""), "(empty) · 0 B");
    }
}
