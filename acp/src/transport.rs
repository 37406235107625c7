//! The agent's stdio as JSON-RPC lines, with two readings of a request that v1 spells
//! otherwise taken as v1 means them, so clients written against an earlier reading of the
//! protocol still get served: `initialize` with its `protocolVersion` as a string of digits
//! (`"1"`), and `session/prompt` with its blocks under `content` instead of `prompt`. Every
//! other line that is a message reaches the crate as it came; a line that is none (over the
//! cap, not UTF-8, not JSON) is answered here ([`super::lines`]).

use std::sync::Arc;

use agent_client_protocol::Lines;
use futures_util::{Sink, Stream};
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader, Stdout};
use tokio::sync::Mutex;

use super::lines::{self, MAX_LINE_BYTES, Read};

/// Standard input and output as the crate's line transport.
pub fn stdio()
-> Lines<impl Sink<String, Error = std::io::Error> + Send, impl Stream<Item = std::io::Result<String>> + Send>
{
    // The crate's lines and the answers to bad lines share stdout, a whole line at a time.
    let stdout = Arc::new(Mutex::new(tokio::io::stdout()));
    let reader = BufReader::with_capacity(64 * 1024, tokio::io::stdin());
    let incoming =
        futures_util::stream::unfold((reader, stdout.clone()), |(mut reader, stdout)| async move {
            loop {
                let answer = match lines::next(&mut reader, MAX_LINE_BYTES).await {
                    Ok(None) => return None,
                    Err(error) => return Some((Err(error), (reader, stdout))),
                    Ok(Some(Read::TooLong { head, bytes })) => lines::too_long(&head, bytes, MAX_LINE_BYTES),
                    Ok(Some(Read::Line(line))) => match lines::json_text(line) {
                        Ok(line) => return Some((Ok(v1_reading(line)), (reader, stdout))),
                        Err(answer) => answer,
                    },
                };
                if let Err(error) = write_line(&stdout, &answer).await {
                    return Some((Err(error), (reader, stdout)));
                }
            }
        });
    let outgoing = futures_util::sink::unfold(stdout, |stdout, line: String| async move {
        write_line(&stdout, &line).await?;
        Ok::<_, std::io::Error>(stdout)
    });
    Lines::new(Box::pin(outgoing), Box::pin(incoming))
}

async fn write_line(stdout: &Mutex<Stdout>, line: &str) -> std::io::Result<()> {
    let mut stdout = stdout.lock().await;
    stdout.write_all(line.as_bytes()).await?;
    stdout.write_all(b"\n").await?;
    stdout.flush().await
}

/// `line` as v1 reads it: rewritten only when it is one of the two requests this module's
/// comment names, spelled the other way; otherwise returned untouched (not even re-encoded).
fn v1_reading(line: String) -> String {
    // Only these two methods are ever rewritten; every other line skips the parse.
    if !(line.contains("\"initialize\"") || line.contains("\"session/prompt\"")) {
        return line;
    }
    let Ok(mut message) = serde_json::from_str::<Value>(&line) else {
        return line;
    };
    let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
    let changed = match (method.as_deref(), message.get_mut("params")) {
        (Some("initialize"), Some(Value::Object(params))) => match params.get("protocolVersion") {
            Some(Value::String(digits)) => match digits.trim().parse::<u16>() {
                Ok(version) => {
                    params.insert("protocolVersion".into(), Value::from(version));
                    true
                }
                Err(_) => false,
            },
            _ => false,
        },
        (Some("session/prompt"), Some(Value::Object(params))) if !params.contains_key("prompt") => {
            match params.remove("content") {
                Some(blocks) => {
                    params.insert("prompt".into(), blocks);
                    true
                }
                None => false,
            }
        }
        _ => false,
    };
    if changed { message.to_string() } else { line }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::v1_reading;

    fn read(message: Value) -> Value {
        serde_json::from_str(&v1_reading(message.to_string())).unwrap()
    }

    use serde_json::Value;

    #[test]
    fn a_string_protocol_version_of_digits_is_read_as_the_number() {
        let request = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "1", "clientCapabilities": {}}});
        assert_eq!(read(request)["params"]["protocolVersion"], json!(1));
        let words = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "one"}});
        assert_eq!(read(words.clone()), words, "a version that is not digits is the crate's to refuse");
    }

    #[test]
    fn prompt_blocks_under_content_are_read_as_the_prompt_and_a_real_prompt_is_kept() {
        let blocks = json!([{"type": "text", "text": "hi"}]);
        let request = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
            "params": {"sessionId": "s", "content": blocks}});
        let read_as = read(request);
        assert_eq!(read_as["params"]["prompt"], blocks);
        assert!(read_as["params"].get("content").is_none());
        let both = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
            "params": {"sessionId": "s", "prompt": blocks, "content": "kept"}});
        assert_eq!(read(both.clone()), both);
    }

    #[test]
    fn other_lines_pass_byte_for_byte() {
        let line =
            r#"{"jsonrpc":"2.0","id":1,  "method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#;
        assert_eq!(v1_reading(line.to_owned()), line);
        assert_eq!(v1_reading("not json \"initialize\"".to_owned()), "not json \"initialize\"");
    }
}
