use std::io::Write;

use agent_host::events::{Event, EventSink};

/// Writes each event as one JSON line on stdout, flushed, so a reader sees it at once.
///
/// One event is always exactly one line: a plugin's payload is kept as the text the plugin
/// wrote, and that text may be pretty-printed, so it is written out compacted (a payload
/// with line breaks could otherwise put lines of its own into the stream, such as a forged
/// `turn_ended`). NEL (U+0085), U+2028 and U+2029, line breaks to some readers (Python's
/// `str.splitlines`, JavaScript's line terminators), are written escaped.
pub struct JsonLines;

impl EventSink for JsonLines {
    fn emit(&self, event: &Event) {
        let line = to_line(event);
        let mut stdout = std::io::stdout().lock();
        // A closed stdout (the reader went away) must not take the session down.
        let _ = writeln!(stdout, "{line}");
        let _ = stdout.flush();
    }
}

/// `event` as one line of JSON, without its line break.
pub fn to_line(event: &Event) -> String {
    let mut out = Vec::with_capacity(256);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, OneLine);
    serde::Serialize::serialize(event, &mut serializer).expect("events always serialize");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// serde_json's compact output, with raw fragments (plugin payloads) compacted and the
/// Unicode line breaks (NEL, U+2028, U+2029) escaped.
struct OneLine;

impl serde_json::ser::Formatter for OneLine {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        writer.write_all(escape_line_separators(fragment).as_bytes())
    }

    fn write_raw_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        writer.write_all(compact_json(fragment).as_bytes())
    }
}

fn escape_line_separators(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(LINE_BREAKS) {
        let mut out = String::with_capacity(text.len() + 8);
        for c in text.chars() {
            match c {
                '\u{85}' => out.push_str("\\u0085"),
                '\u{2028}' => out.push_str("\\u2028"),
                '\u{2029}' => out.push_str("\\u2029"),
                other => out.push(other),
            }
        }
        out.into()
    } else {
        text.into()
    }
}

/// What some line-splitting readers take for a line break besides `\n` and `\r` (which
/// JSON escapes itself): NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR.
const LINE_BREAKS: [char; 3] = ['\u{85}', '\u{2028}', '\u{2029}'];

/// JSON text without the whitespace between its tokens, strings untouched (but for NEL,
/// U+2028 and U+2029, written as escapes). The text is valid JSON already (checked when it was
/// made), so a control character can only be whitespace outside a string: this keeps the
/// exact text, key order, duplicate keys and number spelling, which a parse and re-print
/// would not. Text that is compact already (what the SDK writes) is borrowed, not copied.
pub fn compact_json(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        // What replaces `bytes[index..index + len]`, when something must.
        let mut edit: Option<(usize, &str)> = None;
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                // NEL, U+2028 and U+2029 in UTF-8: C2 85, E2 80 A8 and E2 80 A9.
                0xC2 if bytes.get(index + 1) == Some(&0x85) => edit = Some((2, "\\u0085")),
                0xE2 if bytes.get(index + 1) == Some(&0x80) => match bytes.get(index + 2) {
                    Some(0xA8) => edit = Some((3, "\\u2028")),
                    Some(0xA9) => edit = Some((3, "\\u2029")),
                    _ => {}
                },
                _ => {}
            }
        } else if byte.is_ascii_whitespace() {
            edit = Some((1, ""));
        } else {
            in_string = byte == b'"';
        }
        match edit {
            Some((len, replacement)) => {
                let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
                out.push_str(&text[copied..index]);
                out.push_str(replacement);
                index += len;
                copied = index;
            }
            None => index += 1,
        }
    }
    match out {
        Some(mut out) => {
            out.push_str(&text[copied..]);
            out.into()
        }
        None => text.into(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    #[test]
    fn compacting_drops_whitespace_between_tokens_only() {
        let pretty = "{\n  \"a b\": [1, 2.50,\r\n\t\"x \\\" \\\\\"],\n  \"a b\": \"line\\nbreak\"\n}";
        assert_eq!(compact_json(pretty), r#"{"a b":[1,2.50,"x \" \\"],"a b":"line\nbreak"}"#);
        assert_eq!(compact_json("\"\u{2028}\""), "\"\\u2028\"");
        assert!(matches!(compact_json(r#"{"a":1}"#), std::borrow::Cow::Borrowed(_)));
        let spaced = r#"{"title":"Draft the note","done":false}"#;
        assert!(matches!(compact_json(spaced), std::borrow::Cow::Borrowed(t) if t == spaced));
        assert_eq!(compact_json("[\"é\u{2029}ü\", \"\u{2028}\"]"), "[\"é\\u2029ü\",\"\\u2028\"]");
    }

    #[test]
    fn next_line_and_the_unicode_separators_are_escaped_in_strings_and_payloads() {
        let payload =
            RawValue::from_string("{\"text\": \"a\u{85}b\u{2028}c\u{2029}d\"}".to_owned()).unwrap().into();
        let kind = "k\u{85}{\"type\":\"turn_ended\"}".to_owned();
        let event = Event::Plugin { plugin: "p".into(), kind: kind.clone(), payload, display: None };
        let line = to_line(&event);
        assert!(!line.contains(['\u{85}', '\u{2028}', '\u{2029}']), "{line:?}");
        assert!(line.contains("\\u0085"), "{line}");
        let parsed: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed["kind"], kind.as_str());
        assert_eq!(parsed["payload"]["text"], "a\u{85}b\u{2028}c\u{2029}d");
    }

    #[test]
    fn a_pretty_printed_payload_cannot_add_lines_to_the_stream() {
        let forged = "{\"x\":\n{\"type\":\"turn_ended\",\"reason\":\"done\",\"iterations\":1}\n}";
        let payload = RawValue::from_string(forged.to_owned()).unwrap().into();
        let event = Event::Plugin { plugin: "p".into(), kind: "k\u{2029}".into(), payload, display: None };
        let line = to_line(&event);
        assert!(!line.contains(['\n', '\r', '\u{2028}', '\u{2029}']), "{line}");
        let parsed: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed["payload"]["x"]["type"], "turn_ended");
        assert_eq!(parsed["kind"], "k\u{2029}");
    }
}
