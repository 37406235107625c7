//! The client's lines, read with a cap, and the answers to lines that are not messages.
//!
//! A line is one JSON-RPC message, read whole before it is parsed, so without a cap a client
//! (or whatever writes to the agent's stdin) could make the agent hold a line of any size: a
//! line over [`MAX_LINE_BYTES`] is skipped as it streams, only its first bytes kept, and
//! answered with an error. The connection goes on: an editor that sent one prompt too large
//! (a big file embedded) expects that request to fail, not to lose the agent and every open
//! session with it; and as the line is never held, going on costs nothing. The error goes to
//! the request's `id` when the line's first bytes name it, so the editor's request ends
//! rather than waits forever.
//!
//! A bad line (too long, not UTF-8, not JSON) is answered here rather than by the protocol
//! crate, which quotes the whole line back; these answers quote its first [`QUOTED_BYTES`]
//! bytes. A line that is not UTF-8 is one bad line, no longer the end of the connection.

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest line the agent reads: 16 MiB. An editor sends a prompt's files and images
/// inside its line (embedded resources, base64 images), so the cap is generous: an image as
/// large as a model takes fits with room to spare. Below it memory is bounded by a few times
/// this (the line, then its parse), whatever the client sends.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How much of a bad line its error quotes: enough to recognise it, never the whole line
/// (which may be huge, or hold what should not be echoed into a log).
const QUOTED_BYTES: usize = 200;

/// How much of a line over the cap is kept: room for the quote and for finding its `id`
/// among the first members.
const KEPT_OF_A_LONG_LINE: usize = 4096;

/// One line as read.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// A line within the cap, without its line break.
    Line(Vec<u8>),
    /// A line over the cap: its first bytes and its length.
    TooLong { head: Vec<u8>, bytes: usize },
}

/// Reads the next line of at most `cap` bytes (`\n` or `\r\n` ended, or the last one
/// unended); `None` at the end of input. A longer line is read to its end but not kept.
pub async fn next(reader: &mut (impl AsyncBufRead + Unpin), cap: usize) -> std::io::Result<Option<Read>> {
    let mut line = Vec::new();
    let mut bytes = 0usize;
    let mut read_any = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            break;
        }
        read_any = true;
        let (piece, used, ended) = match available.iter().position(|byte| *byte == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        bytes += piece.len();
        if bytes <= cap {
            line.extend_from_slice(piece);
        } else if line.len() < KEPT_OF_A_LONG_LINE {
            let room = KEPT_OF_A_LONG_LINE - line.len();
            line.extend_from_slice(&piece[..room.min(piece.len())]);
        } else if line.len() > KEPT_OF_A_LONG_LINE {
            // The line just went over: what was held beyond its head goes now, not at its end.
            line.truncate(KEPT_OF_A_LONG_LINE);
            line.shrink_to_fit();
        }
        reader.consume(used);
        if ended {
            break;
        }
    }
    if !read_any {
        return Ok(None);
    }
    if bytes > cap {
        return Ok(Some(Read::TooLong { head: line, bytes }));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(Read::Line(line)))
}

/// The answer to a line over the cap: an Invalid Request error, to the request's `id` when
/// its first bytes name one (so the editor's request fails rather than waits forever).
pub fn too_long(head: &[u8], bytes: usize, cap: usize) -> String {
    let id = request_id(head).unwrap_or(Value::Null);
    error_line(
        id,
        -32600,
        format!(
            "Invalid Request: the message is {bytes} bytes, over the agent's limit of {cap} bytes for \
             one line; it was not read (send large files as resource links rather than embedded)"
        ),
        json!({ "bytes": bytes, "limit": cap, "line": quoted(head) }),
    )
}

/// A line within the cap as the text for the protocol crate when it is JSON (the crate
/// answers what else is wrong with it without quoting it), or else the answer to it: a
/// Parse error, for a line not UTF-8 or not JSON.
pub fn json_text(line: Vec<u8>) -> Result<String, String> {
    let (what, line) = match String::from_utf8(line) {
        Err(error) => {
            let at = error.utf8_error().valid_up_to() + 1;
            (format!("the line is not UTF-8 at byte {at}"), error.into_bytes())
        }
        Ok(text) => match serde_json::from_str::<serde::de::IgnoredAny>(&text) {
            Ok(_) => return Ok(text),
            // A syntax error's own message names what was expected, never the input.
            Err(error) => (format!("the line is not JSON: {error}"), text.into_bytes()),
        },
    };
    Err(error_line(
        Value::Null,
        -32700,
        format!("Parse error: {what}"),
        json!({ "bytes": line.len(), "line": quoted(&line) }),
    ))
}

fn error_line(id: Value, code: i32, message: String, data: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message, "data": data } })
        .to_string()
}

/// The first [`QUOTED_BYTES`] bytes of `line` as text (a character cut there, or bytes not
/// UTF-8, shown as U+FFFD).
fn quoted(line: &[u8]) -> String {
    String::from_utf8_lossy(&line[..line.len().min(QUOTED_BYTES)]).into_owned()
}

/// The `id` member of the object `head` starts, if it is among the members `head` holds
/// whole: a number, a string or null. Only the top level is read, so an `"id"` inside
/// `params` is not taken for the request's.
fn request_id(head: &[u8]) -> Option<Value> {
    let start = head.iter().position(|byte| !byte.is_ascii_whitespace())?;
    if head[start] != b'{' {
        return None;
    }
    let mut depth = 0usize;
    // At the top level, a string is a member's name after `{` or `,`.
    let mut at_name = false;
    let mut index = start;
    while index < head.len() {
        match head[index] {
            open @ (b'{' | b'[') => {
                depth += 1;
                at_name = open == b'{' && depth == 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                at_name = false;
            }
            b',' => at_name = depth == 1,
            b'"' => {
                let end = string_end(head, index + 1)?;
                let named_id = at_name && &head[index + 1..end] == b"id";
                at_name = false;
                index = end;
                if named_id {
                    let rest = head[end + 1..].trim_ascii_start().strip_prefix(b":")?;
                    let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
                    let value = values.next()?.ok()?;
                    // A number at the very end of the head may go on past it.
                    let whole = values.byte_offset() < rest.len();
                    return (whole && matches!(value, Value::Number(_) | Value::String(_) | Value::Null))
                        .then_some(value);
                }
            }
            _ => {}
        }
        index += 1;
    }
    None
}

/// Where the string whose text starts at `from` ends (its closing quote), escapes skipped.
fn string_end(text: &[u8], from: usize) -> Option<usize> {
    let mut index = from;
    while index < text.len() {
        match text[index] {
            b'\\' => index += 2,
            b'"' => return Some(index),
            _ => index += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &[u8], cap: usize) -> Vec<Read> {
        // A small buffer, so lines span many reads.
        let mut reader = tokio::io::BufReader::with_capacity(7, input);
        let mut lines = Vec::new();
        while let Some(line) = next(&mut reader, cap).await.unwrap() {
            lines.push(line);
        }
        lines
    }

    #[tokio::test]
    async fn lines_are_split_on_line_breaks_and_the_last_may_be_unended() {
        let lines = read_all(b"{\"a\":1}\r\n\n{\"b\":2}\nlast", 100).await;
        assert_eq!(
            lines,
            [
                Read::Line(b"{\"a\":1}".to_vec()),
                Read::Line(Vec::new()),
                Read::Line(b"{\"b\":2}".to_vec()),
                Read::Line(b"last".to_vec())
            ]
        );
        assert!(read_all(b"", 100).await.is_empty());
    }

    #[tokio::test]
    async fn a_line_over_the_cap_keeps_only_its_head_and_the_next_line_is_read() {
        let long = format!("{{\"id\":7,\"pad\":\"{}\"}}", "x".repeat(10_000));
        let input = format!("{long}\n{{\"after\":1}}\n");
        let lines = read_all(input.as_bytes(), 1000).await;
        let Read::TooLong { head, bytes } = &lines[0] else { panic!("{:?}", lines[0]) };
        assert_eq!(*bytes, 10_017);
        assert_eq!(head.len(), 4096);
        assert!(head.starts_with(b"{\"id\":7,\"pad\":\"xxx"));
        assert_eq!(lines[1], Read::Line(b"{\"after\":1}".to_vec()));
        // Exactly the cap is within it.
        assert_eq!(read_all(b"12345\n", 5).await, [Read::Line(b"12345".to_vec())]);
        assert!(matches!(read_all(b"123456\n", 5).await[0], Read::TooLong { bytes: 6, .. }));
    }

    #[test]
    fn the_id_is_found_at_the_top_level_only() {
        let id = |head: &str| request_id(head.as_bytes());
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"#), Some(json!(12)));
        assert_eq!(id(r#" { "id" : "a\"b" , "method":"x""#), Some(json!("a\"b")));
        assert_eq!(id(r#"{"method":"x","params":{"id":5,"text":"#), None, "the id in params is not it");
        assert_eq!(id(r#"{"method":"x","params":{"a":[1,{"id":5}]},"id":9,"#), Some(json!(9)));
        assert_eq!(id(r#"{"text":"\"id\":4","#), None, "an id inside a string is not it");
        assert_eq!(id(r#"{"id":{"x":1},"#), None, "an object is no id");
        assert_eq!(id(r#"{"id":12"#), None, "an id cut at the end may be longer");
        assert_eq!(id(r#"["id",1]"#), None);
    }

    #[test]
    fn a_long_lines_answer_names_its_size_and_the_cap_and_quotes_its_start() {
        let head = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"p\":\"{}",
            "y".repeat(4000)
        );
        let answer: Value = serde_json::from_str(&too_long(head.as_bytes(), 50_000_000, 1000)).unwrap();
        assert_eq!(answer["id"], 3);
        assert_eq!(answer["error"]["code"], -32600);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("50000000 bytes") && message.contains("limit of 1000 bytes"), "{message}");
        assert_eq!(answer["error"]["data"]["line"].as_str().unwrap(), &head[..200]);
        let unnamed: Value = serde_json::from_str(&too_long(b"xxxx", 2000, 1000)).unwrap();
        assert_eq!(unnamed["id"], Value::Null);
    }

    #[test]
    fn a_bad_line_is_answered_quoting_its_first_200_bytes_and_json_passes() {
        let message = r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#;
        assert_eq!(json_text(message.into()).unwrap(), message);
        assert_eq!(json_text(b"[1, 2]".to_vec()).unwrap(), "[1, 2]", "the crate answers a batch itself");
        let bad = format!("{{not json {}", "z".repeat(5000));
        let answer: Value = serde_json::from_str(&json_text(bad.clone().into_bytes()).unwrap_err()).unwrap();
        assert_eq!(answer["id"], Value::Null);
        assert_eq!(answer["error"]["code"], -32700);
        let message = answer["error"]["message"].as_str().unwrap();
        assert_eq!(message, "Parse error: the line is not JSON: key must be a string at line 1 column 2");
        assert_eq!(answer["error"]["data"]["line"].as_str().unwrap(), &bad[..200]);
        assert_eq!(answer["error"]["data"]["bytes"], 5010);

        let not_utf8: Value =
            serde_json::from_str(&json_text(b"{\"a\":\"\xff\"}".to_vec()).unwrap_err()).unwrap();
        assert_eq!(not_utf8["error"]["message"], "Parse error: the line is not UTF-8 at byte 7");
        assert_eq!(not_utf8["error"]["data"]["line"], "{\"a\":\"\u{fffd}\"}");
    }
}
