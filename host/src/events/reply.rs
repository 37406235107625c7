//! What the stream says about a model reply beyond its text: why it ended and what it cost.
//! Defined here, below the model clients and the session store: the clients read
//! [`TokenUsage`] off the wire, the store keeps it beside each reply and the stream reports it,
//! all as this one type (the stored JSON is its serde form).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a model reply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplyStop {
    /// The model finished its reply (or the endpoint did not say why it ended).
    Done,
    /// The model asked for tool calls.
    ToolCalls,
    /// The reply hit the output limit (`[model] max_output_tokens`): its text is kept, its
    /// tool calls are not run (each is answered with an error asking for smaller steps).
    Length,
    /// The endpoint stopped the reply for its content.
    Filtered,
    /// The reply broke off part-way (a timeout, a dropped connection): what streamed is kept
    /// and an `error` event follows.
    BrokenOff,
    /// A reason the host does not know.
    Other,
}

/// Tokens one model call used, as the endpoint counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TokenUsage {
    /// Tokens of the request, cached ones included.
    pub input_tokens: u64,
    /// Tokens of the reply, reasoning included.
    pub output_tokens: u64,
    /// Of `input_tokens`, how many were read from the endpoint's prompt cache.
    pub cache_read_tokens: u64,
    /// Of `input_tokens`, how many were written to the endpoint's prompt cache.
    pub cache_write_tokens: u64,
}

impl TokenUsage {
    /// Both counts together: a session's totals.
    pub fn plus(self, other: Self) -> Self {
        Self {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cache_read_tokens: self.cache_read_tokens.saturating_add(other.cache_read_tokens),
            cache_write_tokens: self.cache_write_tokens.saturating_add(other.cache_write_tokens),
        }
    }

    /// `in 1,234 (cached 1,000) · out 56`: the cache parts only when the endpoint used its
    /// cache.
    pub fn summary(&self) -> String {
        let mut cache = Vec::new();
        if self.cache_read_tokens > 0 {
            cache.push(format!("cached {}", thousands(self.cache_read_tokens)));
        }
        if self.cache_write_tokens > 0 {
            cache.push(format!("cache write {}", thousands(self.cache_write_tokens)));
        }
        let cache = if cache.is_empty() { String::new() } else { format!(" ({})", cache.join(", ")) };
        format!("in {}{cache} · out {}", thousands(self.input_tokens), thousands(self.output_tokens))
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_groups_thousands_and_shows_the_cache_only_when_used() {
        let plain = TokenUsage { input_tokens: 999, output_tokens: 0, ..TokenUsage::default() };
        assert_eq!(plain.summary(), "in 999 · out 0");
        let cached = TokenUsage {
            input_tokens: 1_234,
            output_tokens: 56,
            cache_read_tokens: 1_000,
            cache_write_tokens: 0,
        };
        assert_eq!(cached.summary(), "in 1,234 (cached 1,000) · out 56");
        let both = TokenUsage {
            input_tokens: 12_345_678,
            output_tokens: 100_000,
            cache_read_tokens: 1,
            cache_write_tokens: 4_096,
        };
        assert_eq!(both.summary(), "in 12,345,678 (cached 1, cache write 4,096) · out 100,000");
    }

    #[test]
    fn totals_add_field_by_field() {
        let one =
            TokenUsage { input_tokens: 10, output_tokens: 2, cache_read_tokens: 8, cache_write_tokens: 1 };
        let two =
            TokenUsage { input_tokens: 5, output_tokens: 3, cache_read_tokens: 0, cache_write_tokens: 4 };
        assert_eq!(
            one.plus(two),
            TokenUsage { input_tokens: 15, output_tokens: 5, cache_read_tokens: 8, cache_write_tokens: 5 }
        );
    }
}
