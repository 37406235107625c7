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

impl CountedBy {
    /// The name `--json` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Self::O200kBase => "o200k_base",
            Self::O200kHarmony => "o200k_harmony",
            Self::Cl100kBase => "cl100k_base",
            Self::CalibratedBytes => "calibrated_bytes",
            Self::Bytes => "bytes",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counters_name_is_its_json_spelling() {
        for counted_by in [
            CountedBy::O200kBase,
            CountedBy::O200kHarmony,
            CountedBy::Cl100kBase,
            CountedBy::CalibratedBytes,
            CountedBy::Bytes,
        ] {
            assert_eq!(serde_json::to_value(counted_by).unwrap(), counted_by.name());
        }
    }
}
