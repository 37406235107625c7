//! The SSE reader and reply assembler: a valid Chat Completions stream, cut into chunks at
//! random byte boundaries (inside UTF-8 characters too) or at every byte, assembles to the
//! same reply and streams the same text; random bytes and damaged streams never panic and
//! fail with a stream error that says what broke (or a cut reply, once text had streamed).

use agent_host::model::{ModelError, ModelReply, ReplyAssembler, read_event_stream};
use agent_host::tools::ToolCall;
use proptest::prelude::*;
use serde_json::{Value, json};

/// A reply to send: text pieces and tool calls whose arguments arrive in pieces.
#[derive(Debug, Clone)]
struct Script {
    text: Vec<String>,
    calls: Vec<(String, String, Vec<String>)>,
    crlf: bool,
    keep_alive: bool,
}

fn odd_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,16}",
        Just("\n\ndata: [DONE]\n\n".to_owned()),
        Just("\r\n: not a comment\r\n".to_owned()),
        Just("é😀\u{2028}\u{0}\u{feff}".to_owned()),
        Just(" ".to_owned()),
    ]
}

fn script() -> impl Strategy<Value = Script> {
    let call = ("call_[a-z0-9]{1,6}", "[a-zA-Z_]{1,10}", prop::collection::vec(odd_text(), 0..4));
    (prop::collection::vec(odd_text(), 0..6), prop::collection::vec(call, 0..3), any::<bool>(), any::<bool>())
        .prop_map(|(text, calls, crlf, keep_alive)| Script { text, calls, crlf, keep_alive })
}

impl Script {
    /// The `data:` payloads, in the order an endpoint sends them.
    fn chunks(&self) -> Vec<Value> {
        let mut chunks = vec![json!({"choices":[{"delta":{"role":"assistant"}}]})];
        for piece in &self.text {
            chunks.push(json!({"choices":[{"delta":{"content": piece}}]}));
        }
        for (index, (id, name, arguments)) in self.calls.iter().enumerate() {
            chunks.push(
                json!({"choices":[{"delta":{"tool_calls":[{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}}]}),
            );
            for piece in arguments {
                chunks.push(json!({"choices":[{"delta":{"tool_calls":[{"index": index,
                    "function": {"arguments": piece}}]}}]}));
            }
        }
        chunks.push(json!({"choices":[{"delta":{},"finish_reason":"stop"}]}));
        chunks
    }

    fn bytes(&self) -> Vec<u8> {
        let end = if self.crlf { "\r\n" } else { "\n" };
        let mut out = String::new();
        for chunk in self.chunks() {
            if self.keep_alive {
                out.push_str(&format!(": keep-alive{end}{end}"));
            }
            out.push_str(&format!("data: {chunk}{end}{end}"));
        }
        out.push_str(&format!("data: [DONE]{end}{end}"));
        out.into_bytes()
    }

    fn expected(&self) -> ModelReply {
        ModelReply {
            text: self.text.concat(),
            tool_calls: self
                .calls
                .iter()
                .map(|(id, name, arguments)| {
                    let arguments = arguments.concat();
                    ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: if arguments.trim().is_empty() { "{}".to_owned() } else { arguments },
                    }
                })
                .collect(),
            ..ModelReply::default()
        }
    }
}

/// Reads `bytes` cut at `cuts` (sorted byte offsets); returns the reply and the streamed text.
fn read(bytes: &[u8], cuts: &[usize]) -> (Result<ModelReply, ModelError>, String) {
    let mut pieces = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        let cut = cut.clamp(start, bytes.len());
        pieces.push(Ok::<_, std::io::Error>(bytes[start..cut].to_vec()));
        start = cut;
    }
    let mut streamed = String::new();
    let mut on_text = |text: &str| streamed.push_str(text);
    let stream = futures_util::stream::iter(pieces);
    let reply = block_on(read_event_stream(
        stream,
        usize::MAX,
        |error: std::io::Error| ModelError::Stream { detail: error.to_string() },
        &mut on_text,
    ));
    (reply, streamed)
}

/// The reader is a plain future over an in-memory stream: it never waits, so polling it
/// on a current-thread runtime is enough.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(future)
}

#[test]
fn a_stream_cut_anywhere_assembles_to_the_same_reply() {
    let mut runner = super::runner(200);
    let strategy = (script(), prop::collection::vec(any::<prop::sample::Index>(), 0..24));
    runner
        .run(&strategy, |(script, cuts)| {
            let bytes = script.bytes();
            let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let (reply, streamed) = read(&bytes, &cuts);
            let reply = reply.map_err(|error| TestCaseError::fail(error.to_string()))?;
            prop_assert_eq!(&reply, &script.expected());
            prop_assert_eq!(streamed, script.expected().text);
            Ok(())
        })
        .unwrap();
    super::report("sse (random cuts)", &runner);
}

#[test]
fn a_stream_cut_at_every_byte_assembles_to_the_same_reply() {
    let mut runner = super::runner(40);
    runner
        .run(&script(), |script| {
            let bytes = script.bytes();
            let every: Vec<usize> = (1..bytes.len()).collect();
            let (reply, _) = read(&bytes, &every);
            prop_assert_eq!(
                reply.map_err(|error| TestCaseError::fail(error.to_string()))?,
                script.expected()
            );
            Ok(())
        })
        .unwrap();
    super::report("sse (every byte)", &runner);
}

/// What a broken stream must give: a stream error with a detail, or (when text had
/// streamed before it broke off) a cut reply carrying that text; never a panic.
fn check_failure(result: Result<ModelReply, ModelError>) -> Result<(), TestCaseError> {
    match result {
        Ok(_) => Ok(()),
        Err(ModelError::Stream { detail }) => {
            prop_assert!(!detail.trim().is_empty());
            Ok(())
        }
        Err(ModelError::Cut { detail, partial }) => {
            prop_assert!(!detail.trim().is_empty());
            prop_assert!(!partial.text.is_empty(), "a cut reply has the text that streamed");
            Ok(())
        }
        Err(other) => Err(TestCaseError::fail(format!("not a stream error: {other}"))),
    }
}

#[test]
fn random_bytes_never_panic_and_fail_clearly() {
    let mut runner = super::runner(300);
    let garbage = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        "(data: \\PC{0,40}\n{1,2}){0,8}".prop_map(String::into_bytes),
        "(data: \\{\"choices\":\\[\\{\"delta\":\\{\"(content|tool_calls)\":(\\[|\\{|\"|1|null)[^\n]{0,20}\n\n){0,6}"
            .prop_map(String::into_bytes),
    ];
    runner
        .run(&(garbage, prop::collection::vec(any::<prop::sample::Index>(), 0..8)), |(bytes, cuts)| {
            let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
            cuts.sort_unstable();
            check_failure(read(&bytes, &cuts).0)
        })
        .unwrap();
    super::report("sse (random bytes)", &runner);
}

/// A valid stream with bytes flipped, cut or spliced in: no panic, and an error (if any)
/// is a stream error.
#[test]
fn damaged_streams_never_panic() {
    let mut runner = super::runner(200);
    let strategy = (script(), any::<prop::sample::Index>(), prop::collection::vec(any::<u8>(), 0..8), 0u8..3);
    runner
        .run(&strategy, |(script, at, junk, how)| {
            let mut bytes = script.bytes();
            let at = at.index(bytes.len() + 1);
            match how {
                0 => bytes.truncate(at),
                1 => {
                    bytes.splice(at..at, junk);
                }
                _ => {
                    for (offset, byte) in junk.into_iter().enumerate() {
                        if let Some(slot) = bytes.get_mut(at + offset) {
                            *slot ^= byte;
                        }
                    }
                }
            }
            check_failure(read(&bytes, &[at / 2, at]).0)
        })
        .unwrap();
    super::report("sse (damaged)", &runner);
}

/// Whole (non-streamed) responses: any JSON never panics the parser.
#[test]
fn random_whole_responses_never_panic() {
    let mut runner = super::runner(300);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "\\PC{0,10}".prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(4, 40, 6, |inner| {
        let keys = prop::sample::select(vec![
            "choices",
            "message",
            "content",
            "tool_calls",
            "function",
            "name",
            "arguments",
            "id",
            "index",
            "x",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(keys, inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    });
    runner
        .run(&value, |value| {
            let body = value.to_string();
            if let Err(error) = ReplyAssembler::from_response(body.as_bytes()) {
                prop_assert!(matches!(error, ModelError::Stream { .. }), "{}", error);
            }
            let mut assembler = ReplyAssembler::default();
            if let Err(error) = assembler.push_chunk(&body) {
                prop_assert!(matches!(error, ModelError::Stream { .. }), "{}", error);
            }
            Ok(())
        })
        .unwrap();
    super::report("sse (whole responses)", &runner);
}
