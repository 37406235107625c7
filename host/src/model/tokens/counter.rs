//! How a request's text is counted: with an OpenAI model's own tokenizer where the model name
//! says which, else by its bytes.
//!
//! The tokenizers are `bpe-openai`'s shared encoders, each loaded once (reading its tables
//! takes a while: a host starts it on a thread of its own, [`Counter::prepare`]); a model the
//! host has no tokenizer for costs nothing to count.

use std::sync::LazyLock;

use bpe_openai::Tokenizer as Encoder;
use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};

use super::memo::CountMemo;
use super::{pieces, presplit};
use crate::conversation::{Message, Role};
use crate::events::CountedBy;

/// What every message adds beyond its text, in the chat format's tokens: its start, its role's
/// header and its end (OpenAI's cookbook, "How to count tokens with tiktoken").
const TOKENS_PER_MESSAGE: u64 = 3;
/// What the reply's own header adds: every reply is primed with the assistant's.
pub(super) const TOKENS_PER_REPLY: u64 = 3;
/// What a tool call or a tool definition adds beyond its name and JSON, as a guess: the chat
/// format renders them in a syntax of its own.
const TOKENS_PER_TOOL: u64 = 8;
/// What a message adds beyond its text in a request body (its JSON's keys and quotes), as a
/// guess that the calibration corrects.
const BYTES_PER_MESSAGE: u64 = 24;
/// The same for one tool call in a message.
const BYTES_PER_CALL: u64 = 48;

/// How text is counted for one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// The model's own tokenizer.
    Tokenizer(Encoding),
    /// Bytes, turned into tokens at the rate the endpoint's usage shows.
    Bytes,
}

/// The tokenizers the host has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    O200kBase,
    O200kHarmony,
    Cl100kBase,
}

impl Counter {
    /// The counter for a model named `model` (a router's `vendor/` path ignored).
    pub fn for_model(model: &str) -> Self {
        let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
        match get_tokenizer(&name) {
            Some(Tokenizer::O200kBase) => Self::Tokenizer(Encoding::O200kBase),
            Some(Tokenizer::O200kHarmony) => Self::Tokenizer(Encoding::O200kHarmony),
            Some(Tokenizer::Cl100kBase) => Self::Tokenizer(Encoding::Cl100kBase),
            // The older encodings are for completion models, which no chat endpoint serves.
            Some(Tokenizer::P50kBase | Tokenizer::P50kEdit | Tokenizer::R50kBase | Tokenizer::Gpt2)
            | None => Self::Bytes,
        }
    }

    /// Builds the tokenizer on a thread of its own, so the first model call does not wait for
    /// it (parsing its vocabulary is the slow part): what a host calls as it starts.
    pub fn prepare(self) {
        if let Self::Tokenizer(encoding) = self {
            // Without the thread, the first model call builds it: slower, not wrong.
            let _ = std::thread::Builder::new().name("tokenizer".into()).spawn(move || encoding.bpe());
        }
    }

    /// What one message comes to.
    pub(super) fn message(self, message: &Message) -> Size {
        self.sized(message, Encoding::count)
    }

    /// What one message that comes back in call after call comes to (an injected message),
    /// its text counted once while it recurs.
    pub(super) fn recurring_message(self, message: &Message) -> Size {
        self.sized(message, Encoding::count_recurring)
    }

    fn sized(self, message: &Message, count: fn(Encoding, &str) -> u64) -> Size {
        let calls = &message.tool_calls;
        let call_bytes: usize =
            calls.iter().map(|call| call.id.len() + call.name.len() + call.arguments.len()).sum();
        let bytes = BYTES_PER_MESSAGE
            + (message.content.len() + call_bytes + message.tool_call_id.as_ref().map_or(0, String::len))
                as u64
            + BYTES_PER_CALL * calls.len() as u64;
        let tokens = match self {
            Self::Bytes => 0,
            Self::Tokenizer(encoding) => {
                let role = match message.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "tool",
                };
                TOKENS_PER_MESSAGE
                    + encoding.count_recurring(role)
                    + count(encoding, &message.content)
                    + calls
                        .iter()
                        .map(|call| {
                            TOKENS_PER_TOOL
                                + encoding.count_recurring(&call.name)
                                + count(encoding, &call.arguments)
                        })
                        .sum::<u64>()
            }
        };
        Size { bytes, tokens }
    }

    /// What a system prompt and tool definitions (name, description, JSON Schema) come to.
    pub(super) fn fixed<'a>(self, system: &str, tools: impl Iterator<Item = [&'a str; 3]> + Clone) -> Size {
        let bytes = BYTES_PER_MESSAGE
            + system.len() as u64
            + tools
                .clone()
                .map(|parts| BYTES_PER_CALL + parts.iter().map(|part| part.len() as u64).sum::<u64>())
                .sum::<u64>();
        let tokens = match self {
            Self::Bytes => 0,
            Self::Tokenizer(encoding) => {
                TOKENS_PER_MESSAGE
                    + encoding.count_recurring("system")
                    + encoding.count_recurring(system)
                    + tools
                        .map(|parts| {
                            TOKENS_PER_TOOL
                                + parts.iter().map(|part| encoding.count_recurring(part)).sum::<u64>()
                        })
                        .sum::<u64>()
            }
        };
        Size { bytes, tokens }
    }
}

impl Encoding {
    fn bpe(self) -> &'static Encoder {
        match self {
            // Harmony is o200k's vocabulary with special tokens added; read as text, as every
            // count here is, they are spelled out in o200k's tokens.
            Self::O200kBase | Self::O200kHarmony => bpe_openai::o200k_base(),
            Self::Cl100kBase => bpe_openai::cl100k_base(),
        }
    }

    fn pattern(self) -> presplit::Pattern {
        match self {
            Self::O200kBase | Self::O200kHarmony => presplit::Pattern::O200k,
            Self::Cl100kBase => presplit::Pattern::Cl100k,
        }
    }

    /// The tokens of `text`, read as text: a special token's spelling in it is ordinary text.
    pub fn count(self, text: &str) -> u64 {
        if text.is_empty() {
            return 0;
        }
        // `Encoder::count`, with ASCII text pre-split by hand and each piece counted once per
        // thread.
        let encoder = self.bpe();
        let text = encoder.normalize(text);
        let tokenizer = self as u8;
        let count = |piece: &str| encoder.bpe.count(piece.as_bytes());
        let cut = presplit::split(encoder, self.pattern(), text.as_str());
        pieces::count_all(tokenizer, cut, count) as u64
    }

    /// [`Self::count`] of a text that comes back in request after request (the system prompt, a
    /// tool's definition, an injected message): tokenized once while it recurs.
    pub fn count_recurring(self, text: &str) -> u64 {
        static MEMOS: [LazyLock<CountMemo>; 3] = [
            LazyLock::new(CountMemo::default),
            LazyLock::new(CountMemo::default),
            LazyLock::new(CountMemo::default),
        ];
        let memo = match self {
            Self::O200kBase => &MEMOS[0],
            Self::O200kHarmony => &MEMOS[1],
            Self::Cl100kBase => &MEMOS[2],
        };
        // Missed whole, the text is counted line by line, each line kept on its own: what
        // recurs with a line changed (a list injected anew before each call) costs that line.
        memo.count(text, |text| {
            let mut lines = presplit::lines(text);
            let first = lines.next().unwrap_or(text);
            if first.len() == text.len() {
                return self.count(text);
            }
            std::iter::once(first).chain(lines).map(|line| memo.count(line, |line| self.count(line))).sum()
        })
    }

    pub(super) fn counted_by(self) -> CountedBy {
        match self {
            Self::O200kBase => CountedBy::O200kBase,
            Self::O200kHarmony => CountedBy::O200kHarmony,
            Self::Cl100kBase => CountedBy::Cl100kBase,
        }
    }
}

/// What a message, or a part of a request, comes to: its bytes always, its tokens when the
/// counter has a tokenizer (0 otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Size {
    pub bytes: u64,
    pub tokens: u64,
}

impl std::ops::Add for Size {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self { bytes: self.bytes + other.bytes, tokens: self.tokens + other.tokens }
    }
}

impl std::iter::Sum for Size {
    fn sum<I: Iterator<Item = Self>>(sizes: I) -> Self {
        sizes.fold(Self::default(), |a, b| a + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts published with the tokenizers: tiktoken's own tests (`tests/test_encoding.py`:
    /// "hello world", "today\n \n", "👍"), tiktoken-rs's (`tests/tiktoken.rs`: the sentence with
    /// spaces, in both encodings) and OpenAI's cookbook ("How to count tokens with tiktoken":
    /// "tiktoken is great!", and cl100k's column of its encoding comparison).
    #[test]
    fn the_tokenizers_count_as_their_published_examples_do() {
        let cl100k = |text| Encoding::Cl100kBase.count(text);
        assert_eq!(cl100k("hello world"), 2);
        assert_eq!(cl100k("today\n \n"), 2);
        assert_eq!(cl100k("👍"), 3);
        assert_eq!(cl100k("This is a test         with a lot of spaces"), 10);
        assert_eq!(cl100k("tiktoken is great!"), 6);
        assert_eq!(cl100k("antidisestablishmentarianism"), 6);
        assert_eq!(cl100k("2 + 2 = 4"), 7);
        assert_eq!(cl100k("お誕生日おめでとう"), 9);
        assert_eq!(Encoding::O200kBase.count("This is a test         with a lot of spaces"), 10);
        assert_eq!(Encoding::O200kBase.count(""), 0);
    }

    /// tiktoken's own encoders (tiktoken-rs's port) are the reference the counts must match,
    /// on text of every kind a request carries.
    #[test]
    fn the_counts_are_tiktokens_on_every_kind_of_text() {
        let texts = [
            "fn main() {\n    println!(\"hello, {}\", name);\n}\n",
            r#"{"todos":[{"title":"step 1 of 7","status":"pending"},{"id":3,"reason":"done"}]}"#,
            "- [x] #1 write the tests\n- [ ] #2 make them pass\t\t(blocked)\n\n\n",
            "Ça coûte 12,50 € — naïve façade; Grüße aus Köln! 東京都の天気は晴れ。 Привет, мир.",
            "emoji 👍🏽👨‍👩‍👧 and symbols ∑∫√ ≤≥ → ← «»",
            "   leading spaces, trailing spaces   \r\n\r\n  and CRLF lines\r\n",
            "<|endoftext|> <|im_start|>user<|im_end|> spelled out as text",
            "1234567890 3.14159 -0.5e10 0xdeadBEEF 2026-12-05T19:40:00Z",
            "I'm sure they'll say we've done what you'd've done; DON'T SHOUT'S",
        ];
        let references = [
            (Encoding::Cl100kBase, tiktoken_rs::cl100k_base_singleton()),
            (Encoding::O200kBase, tiktoken_rs::o200k_base_singleton()),
            (Encoding::O200kHarmony, tiktoken_rs::o200k_harmony_singleton()),
        ];
        for (encoding, reference) in references {
            for text in texts {
                let expected = reference.encode_ordinary(text).len() as u64;
                assert_eq!(encoding.count(text), expected, "{encoding:?} on {text:?}");
            }
        }
    }

    #[test]
    fn a_long_run_of_one_letter_is_counted() {
        // As tiktoken's `test_large_repeated`: one regex piece as long as a tool's largest
        // output, which a merge that rescans the piece for every pair would take hours over.
        let run = "x".repeat(256 << 10);
        let tokens = Encoding::O200kBase.count(&run);
        assert!(tokens > 0 && tokens < run.len() as u64, "{tokens}");
    }

    #[test]
    fn a_special_token_spelled_in_text_is_counted_as_text() {
        // With special tokens read, `<|endoftext|>` would be the one token 100257.
        assert!(Encoding::Cl100kBase.count("hello <|endoftext|>") > 3);
    }

    #[test]
    fn the_model_name_picks_the_tokenizer() {
        for (model, counter) in [
            ("gpt-4o-mini", Counter::Tokenizer(Encoding::O200kBase)),
            ("gpt-4.1", Counter::Tokenizer(Encoding::O200kBase)),
            ("gpt-5-mini", Counter::Tokenizer(Encoding::O200kBase)),
            ("o3", Counter::Tokenizer(Encoding::O200kBase)),
            ("openai/o4-mini", Counter::Tokenizer(Encoding::O200kBase)),
            ("gpt-oss-20b", Counter::Tokenizer(Encoding::O200kHarmony)),
            ("gpt-4-0613", Counter::Tokenizer(Encoding::Cl100kBase)),
            ("GPT-3.5-turbo", Counter::Tokenizer(Encoding::Cl100kBase)),
            ("claude-sonnet-4-5", Counter::Bytes),
            ("qwen3-8b", Counter::Bytes),
            ("fake", Counter::Bytes),
            ("davinci", Counter::Bytes),
        ] {
            assert_eq!(Counter::for_model(model), counter, "{model}");
        }
    }

    #[test]
    fn a_message_counts_its_text_its_calls_and_its_framing() {
        let counter = Counter::Tokenizer(Encoding::Cl100kBase);
        let plain = counter.message(&Message::user("hello world"));
        assert_eq!(plain.tokens, TOKENS_PER_MESSAGE + 1 + 2, "framing, the role `user`, the text");
        assert_eq!(plain.bytes, BYTES_PER_MESSAGE + 11);
        let call = crate::tools::ToolCall {
            id: "c1".into(),
            name: "run".into(),
            arguments: "{\"command\":\"ls\"}".into(),
        };
        let with_call = counter.message(&Message::assistant("hello world", vec![call]));
        assert!(with_call.tokens > plain.tokens + TOKENS_PER_TOOL, "{with_call:?}");
        assert_eq!(with_call.bytes, BYTES_PER_MESSAGE + 11 + BYTES_PER_CALL + 2 + 3 + 16);
        assert_eq!(Counter::Bytes.message(&Message::user("hello world")).tokens, 0, "nothing tokenized");
    }
}
