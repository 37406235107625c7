//! How full the model's context window is: the estimate of a request made before it is sent,
//! reported on the `model_request` event, shown in the console's prompt and in `/session`.

use schemars::JsonSchema;
use serde::Serialize;

use super::TokenUsage;

/// The estimated size of one model call against the model's context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ContextEstimate {
    /// The request's tokens: system prompt, tool definitions, history and injected messages.
    pub prompt_tokens: u64,
    /// The tokens kept free for the reply (`[model] max_output_tokens`, or its default).
    pub output_reserve: u64,
    /// `prompt_tokens` and `output_reserve` together: what of the window the call may take.
    pub estimated_tokens: u64,
    /// The model's context window (`[model] context_window`, or the known model's); left out
    /// when neither says.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub window: Option<u64>,
    /// How the prompt was counted.
    pub counted_by: CountedBy,
    /// What the session's last reported model call used, as its endpoint counted; left out
    /// before the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "TokenUsage")]
    pub last_usage: Option<TokenUsage>,
}

impl ContextEstimate {
    /// `~12,345 of 128,000 tokens` (`~12,345 tokens` without a window): for people.
    pub fn summary(&self) -> String {
        let used = super::reply::thousands(self.estimated_tokens);
        match self.window {
            Some(window) => format!("~{used} of {} tokens", super::reply::thousands(window)),
            None => format!("~{used} tokens"),
        }
    }
}

/// How an estimate counted the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CountedBy {
    /// With the tokenizer of GPT-4o, GPT-4.1, GPT-5 and the o-series.
    O200kBase,
    /// With the tokenizer of gpt-oss.
    O200kHarmony,
    /// With the tokenizer of GPT-4 and GPT-3.5.
    Cl100kBase,
    /// From the request's bytes, at the tokens per byte the last reported call had.
    CalibratedBytes,
    /// From the request's bytes, at four bytes a token: no call has reported its usage yet.
    Bytes,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_the_window_when_there_is_one() {
        let mut estimate = ContextEstimate {
            prompt_tokens: 12_000,
            output_reserve: 345,
            estimated_tokens: 12_345,
            window: Some(128_000),
            counted_by: CountedBy::Bytes,
            last_usage: None,
        };
        assert_eq!(estimate.summary(), "~12,345 of 128,000 tokens");
        estimate.window = None;
        assert_eq!(estimate.summary(), "~12,345 tokens");
    }
}
