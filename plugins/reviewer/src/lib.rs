//! The `reviewer` plugin: a model reviews a tool call in the operator's place. The host asks
//! it (the `judge` export's `review`, contract 0.2.7) only about calls the permission hooks
//! would put to the operator; it sends the exact call and the policy text of its config to
//! the deployment's model and answers allow, deny (with a reason the model sees) or error. An
//! error — the model could not be asked, its answer made no sense — is never a denial and
//! never an approval: the host puts the call to the operator, or `agent.on_ask` decides.
//!
//! Every review is audited by the host (`tool_reviewed`, with the call); with `audit = true`
//! also as one JSON line in `/audit/reviews.jsonl` of a granted folder. Needs
//! `[plugin.grants] model = true`, and `review = true` to approve in the operator's place: the
//! host refuses to load it without.

mod audit;
mod verdict;

#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

use agent_host_sdk::judge::ReviewVerdict;
use agent_host_sdk::model::{ChatMessage, CompleteOptions};
use agent_host_sdk::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// What the reviewer holds calls to, in plain words ("Allow reading and building; deny
    /// anything that deletes or sends data out").
    pub policy: String,
    /// The tools it reviews, by name (`run`, or a prefix with `*`: `mcp__github__*`); every
    /// tool when empty. It abstains on the others.
    pub tools: Vec<String>,
    /// Tokens its answer may take (200 when unset).
    pub answer_tokens: Option<u32>,
    /// Characters of the call's arguments it reads (8,000 when unset); a call with more is
    /// an error, never a guess on half of it.
    pub max_argument_chars: Option<usize>,
    /// One JSON line per review in `/audit/reviews.jsonl` (grant the folder as `/audit`).
    pub audit: bool,
}

impl Config {
    fn answer_tokens(&self) -> u32 {
        self.answer_tokens.unwrap_or(200)
    }

    fn max_argument_chars(&self) -> usize {
        self.max_argument_chars.unwrap_or(8_000)
    }

    /// Whether it reviews calls of `tool`.
    fn reviews(&self, tool: &str) -> bool {
        self.tools.is_empty()
            || self.tools.iter().any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => tool.starts_with(prefix),
                None => pattern == tool,
            })
    }
}

/// The plugin's declaration.
pub fn plugin() -> Plugin<Config> {
    Plugin::new("reviewer", env!("CARGO_PKG_VERSION"))
        .configure(|config: &mut Config| {
            if config.policy.trim().is_empty() {
                return Err("`policy` is missing: the text the reviewer holds calls to".into());
            }
            if config.answer_tokens() < 16 {
                return Err("`answer_tokens` must be at least 16: the reviewer answers in JSON".into());
            }
            Ok(Vec::new())
        })
        .on_review(review)
}

export_plugin!(plugin);

const INSTRUCTIONS: &str = "You review one tool call an AI agent wants to make, in place of its \
operator, against the operator's policy below. Judge only this exact call and its arguments. Answer \
with one JSON object and nothing else: {\"decision\": \"allow\" | \"deny\", \"reason\": \"one sentence \
the agent will read\"}.";

fn review(ctx: &Context<Config>, call: &ToolUse, asked: &str) -> ReviewVerdict {
    if !ctx.config.reviews(&call.call.name) {
        return ReviewVerdict::Abstain;
    }
    let verdict = judge(&ctx.config, call, asked);
    if ctx.config.audit
        && let Err(error) = audit::append(ctx, call, &verdict)
    {
        // The audit the operator asked for is missing: the call waits for a person.
        return ReviewVerdict::Error(format!("the review could not be audited: {error}"));
    }
    verdict
}

fn judge(config: &Config, call: &ToolUse, asked: &str) -> ReviewVerdict {
    let arguments = &call.call.arguments;
    if arguments.chars().count() > config.max_argument_chars() {
        return ReviewVerdict::Error(format!(
            "the call's arguments are longer than the {} characters it reads (`max_argument_chars`)",
            config.max_argument_chars()
        ));
    }
    let effect = if call.mutates { "it may change things" } else { "it only reads" };
    let messages = [
        ChatMessage::system(format!("{INSTRUCTIONS}\n\nPolicy:\n{}", config.policy)),
        ChatMessage::user(format!(
            "Tool: {} (offered by {}; {effect})\nWhy its operator would be asked: {asked}\nArguments (JSON):\n{arguments}",
            call.call.name, call.plugin
        )),
    ];
    match model::complete(&messages, CompleteOptions::max_output_tokens(config.answer_tokens())) {
        Ok(answer) => verdict::read(&answer.text),
        Err(error) => ReviewVerdict::Error(format!("the model could not be asked: {error}")),
    }
}
