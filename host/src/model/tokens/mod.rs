//! The size of a model call before it is sent: the system prompt, the tool definitions, the
//! history and the injected messages, counted with the model's tokenizer where the host has
//! it ([`Counter`]), else from their bytes at the rate the session's last reported call
//! showed; and the output reserve beside them, against the model's context window.
//!
//! It runs before every model call, so what each history message comes to is kept per
//! session under the history's revision, as its encoding is (`PerMessage`): a call counts only
//! the messages appended since the one before.

mod counter;
mod memo;
mod pieces;
mod presplit;

pub use counter::{Counter, Encoding, Size};

use super::encodings::same_tools;
use super::history_encodings::PerMessage;
use super::types::ModelRequest;
use super::{ModelClient, ToolDefinition};
use crate::config::ModelConfig;
use crate::conversation::{History, Message};
use crate::events::{ContextEstimate, CountedBy, TokenUsage};
use counter::TOKENS_PER_REPLY;

/// The bytes a token is taken for until a call reports its usage: about what English prose
/// and JSON come to in the common tokenizers.
const BYTES_PER_TOKEN: u64 = 4;

/// What a deployment's model calls are measured with and against, from `[model]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBudget {
    pub counter: Counter,
    /// The context window, when known; see [`ModelConfig::window`].
    pub window: Option<u32>,
    /// See [`ModelConfig::output_reserve`].
    pub output_reserve: u32,
}

impl TokenBudget {
    /// The budget of `client`, configured by `model`.
    pub fn new(model: &ModelConfig, client: &ModelClient) -> Self {
        // A scripted model (the offline demo's too) reads no tokens, whatever `model` says.
        let counter = match client {
            ModelClient::Scripted(_) => Counter::Bytes,
            ModelClient::OpenAi(_) | ModelClient::Anthropic(_) => Counter::for_model(&model.model),
        };
        Self { counter, window: model.window(), output_reserve: model.output_reserve() }
    }

    /// The tokens every request takes whatever the conversation: the system prompt, the tool
    /// definitions and the reply's header, and the output reserve. Bytes are taken at the
    /// uncalibrated rate: no call has been made to calibrate it.
    pub fn fixed_tokens(&self, system: &str, tools: &[ToolDefinition]) -> FixedPart {
        let size = self.counter.fixed(system, tool_parts(tools));
        let prompt = match self.counter {
            Counter::Tokenizer(_) => size.tokens + TOKENS_PER_REPLY,
            Counter::Bytes => size.bytes.div_ceil(BYTES_PER_TOKEN),
        };
        FixedPart { prompt, output_reserve: u64::from(self.output_reserve) }
    }
}

/// What every request takes; see [`TokenBudget::fixed_tokens`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedPart {
    /// The system prompt, the tool definitions and the reply's header.
    pub prompt: u64,
    pub output_reserve: u64,
}

impl FixedPart {
    pub fn total(&self) -> u64 {
        self.prompt + self.output_reserve
    }
}

/// One session's accounting, kept beside it from one model call to the next.
#[derive(Debug, Default)]
pub struct ContextAccount {
    sizes: PerMessage<Size>,
    /// The system prompt and tools last counted with a tokenizer, and what they came to:
    /// they come back unchanged from call to call.
    fixed: Option<CountedFixed>,
    /// The bytes of the request last estimated, until its reply says what it used.
    estimated_bytes: Option<u64>,
    calibration: Option<Calibration>,
    last: Option<ContextEstimate>,
    /// The tokens of the request last estimated that are not its history: system prompt,
    /// tools, injected messages, the reply's header.
    beside_history: Option<u64>,
    in_use: Option<InUse>,
}

/// The tokens a conversation took at its last model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InUse {
    pub tokens: u64,
    /// Whether the endpoint counted them (its request and reply), rather than the estimate
    /// (of the request).
    pub reported: bool,
}

#[derive(Debug)]
struct CountedFixed {
    system: String,
    tools: Vec<ToolDefinition>,
    size: Size,
}

/// A request's bytes and the input tokens its endpoint counted for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Calibration {
    bytes: u64,
    input_tokens: u64,
}

impl Calibration {
    fn new(bytes: u64, input_tokens: u64) -> Option<Self> {
        (bytes > 0 && input_tokens > 0).then_some(Self { bytes, input_tokens })
    }

    fn tokens_for(self, bytes: u64) -> u64 {
        let tokens = (u128::from(bytes) * u128::from(self.input_tokens)).div_ceil(u128::from(self.bytes));
        u64::try_from(tokens).unwrap_or(u64::MAX)
    }
}

impl ContextAccount {
    /// The account of a session resumed from the store, whose last reported call used
    /// `last_usage`.
    pub fn resumed(last_usage: Option<TokenUsage>) -> Self {
        Self { in_use: last_usage.map(InUse::reported), ..Self::default() }
    }

    /// The estimate of `request` under `budget`. `last_usage` is the session's last reported
    /// call (its reply's history position and usage): on a session resumed from the store it
    /// calibrates the byte count until a call made here does.
    pub fn estimate(
        &mut self,
        budget: &TokenBudget,
        request: &ModelRequest<'_>,
        last_usage: Option<(usize, TokenUsage)>,
    ) -> ContextEstimate {
        let counter = budget.counter;
        let fixed = self.fixed_size(counter, request.system, request.tools);
        let sizes = self.sizes.of(request.history, |message| counter.message(message));
        let history: Size = sizes.iter().copied().sum();
        let injected: Size = request.injected.iter().map(|message| counter.recurring_message(message)).sum();
        let total = fixed + history + injected;
        if self.calibration.is_none()
            && let Some((position, usage)) = last_usage
        {
            // That call sent the history before its reply, with the system prompt and tools
            // (as far as is known) as they are now; its injected messages are not known.
            let before: Size = sizes[..position.min(sizes.len())].iter().copied().sum();
            self.calibration = Calibration::new(fixed.bytes + before.bytes, usage.input_tokens);
        }
        let (prompt_tokens, counted_by) = match (counter, self.calibration) {
            (Counter::Tokenizer(encoding), _) => (total.tokens + TOKENS_PER_REPLY, encoding.counted_by()),
            (Counter::Bytes, Some(calibration)) => {
                (calibration.tokens_for(total.bytes), CountedBy::CalibratedBytes)
            }
            (Counter::Bytes, None) => (total.bytes.div_ceil(BYTES_PER_TOKEN), CountedBy::Bytes),
        };
        self.estimated_bytes = Some(total.bytes);
        let history_tokens = tokens_of(counter, self.calibration, history);
        self.beside_history = Some(prompt_tokens.saturating_sub(history_tokens));
        let output_reserve = u64::from(budget.output_reserve);
        let estimate = ContextEstimate {
            prompt_tokens,
            output_reserve,
            estimated_tokens: prompt_tokens.saturating_add(output_reserve),
            window: budget.window.map(u64::from),
            counted_by,
            last_usage: last_usage.map(|(_, usage)| usage),
        };
        self.last = Some(estimate);
        self.in_use = Some(InUse { tokens: prompt_tokens, reported: false });
        estimate
    }

    /// What each message of `history` comes to, in tokens as [`Self::estimate`] counts them
    /// (calibrated bytes where there is no tokenizer): what a compaction weighs messages by.
    pub fn message_tokens(&mut self, budget: &TokenBudget, history: &History) -> Vec<u64> {
        let (counter, calibration) = (budget.counter, self.calibration);
        let sizes = self.sizes.of(history, |message| counter.message(message));
        sizes.iter().map(|&size| tokens_of(counter, calibration, size)).collect()
    }

    /// What one message not (yet) in the history comes to, as [`Self::message_tokens`].
    pub fn tokens_of(&self, budget: &TokenBudget, message: &Message) -> u64 {
        tokens_of(budget.counter, self.calibration, budget.counter.message(message))
    }

    /// The tokens of the last request estimated that were not its history (the system
    /// prompt, the tools, the injected messages); `None` before the first estimate.
    pub fn beside_history(&self) -> Option<u64> {
        self.beside_history
    }

    /// The reply to the request last estimated arrived, with what its endpoint said it used:
    /// the byte count is calibrated by it from now on.
    pub fn replied(&mut self, usage: Option<&TokenUsage>) {
        let Some(usage) = usage else { return };
        self.in_use = Some(InUse::reported(*usage));
        if let Some(bytes) = self.estimated_bytes.take()
            && let Some(calibration) = Calibration::new(bytes, usage.input_tokens)
        {
            self.calibration = Some(calibration);
        }
    }

    /// The tokens the conversation took at its last model call: as its endpoint reported them
    /// when it did, else as estimated before it. `None` before the first call (of a new
    /// session, or one resumed without a reported call).
    pub fn in_use(&self) -> Option<InUse> {
        self.in_use
    }

    /// The estimate of the session's last model call made in this process.
    pub fn last(&self) -> Option<&ContextEstimate> {
        self.last.as_ref()
    }

    fn fixed_size(&mut self, counter: Counter, system: &str, tools: &[ToolDefinition]) -> Size {
        // Bytes cost less to add up again than to compare.
        if counter == Counter::Bytes {
            return counter.fixed(system, tool_parts(tools));
        }
        if let Some(kept) = &self.fixed
            && kept.system == system
            && same_tools(&kept.tools, tools)
        {
            return kept.size;
        }
        let size = counter.fixed(system, tool_parts(tools));
        self.fixed = Some(CountedFixed { system: system.to_owned(), tools: tools.to_vec(), size });
        size
    }
}

impl InUse {
    fn reported(usage: TokenUsage) -> Self {
        Self { tokens: usage.input_tokens.saturating_add(usage.output_tokens), reported: true }
    }
}

/// What `size` comes to in tokens: the tokenizer's count, else its bytes at the calibrated
/// rate (or the uncalibrated one before any call reported its usage).
fn tokens_of(counter: Counter, calibration: Option<Calibration>, size: Size) -> u64 {
    match (counter, calibration) {
        (Counter::Tokenizer(_), _) => size.tokens,
        (Counter::Bytes, Some(calibration)) => calibration.tokens_for(size.bytes),
        (Counter::Bytes, None) => size.bytes.div_ceil(BYTES_PER_TOKEN),
    }
}

/// Each tool's name, description and JSON Schema text.
fn tool_parts(tools: &[ToolDefinition]) -> impl Iterator<Item = [&str; 3]> + Clone {
    tools.iter().map(|tool| [tool.name.as_str(), tool.description.as_str(), tool.parameters.get()])
}

#[cfg(test)]
mod tests;
