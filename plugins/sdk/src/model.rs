//! Asking the deployment's model, for plugins granted `model = true` (contract 0.2.2):
//! summaries, judges, reviewers. The host sends the messages with no tools, within the
//! grant's token budgets and what is left of the call's deadline; every refusal is an error
//! naming what refused it (the grant, a budget, the deadline).

pub use crate::bindings::agent_host::plugin::model::{ChatMessage, ChatRole, CompleteOptions, Completion};
use crate::host::model as raw;

impl ChatMessage {
    /// Instructions; every system message goes, in order, into the request's system prompt.
    pub fn system(content: impl Into<String>) -> Self {
        Self { role: ChatRole::System, content: content.into() }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self { role: ChatRole::User, content: content.into() }
    }

    /// An earlier answer of the model, to continue a conversation.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self { role: ChatRole::Assistant, content: content.into() }
    }
}

impl CompleteOptions {
    /// The reply held to at most `tokens` (within the grant's `model_tokens_per_call`).
    pub fn max_output_tokens(tokens: u32) -> Self {
        Self { max_output_tokens: Some(tokens) }
    }
}

impl Default for CompleteOptions {
    /// The reply held to the grant's `model_tokens_per_call`.
    fn default() -> Self {
        Self { max_output_tokens: None }
    }
}

/// Sends `messages` to the deployment's model and returns its answer with its token counts.
pub fn complete(messages: &[ChatMessage], options: CompleteOptions) -> Result<Completion, String> {
    raw::complete(messages, options)
}
