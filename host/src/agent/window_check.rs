//! Whether the model's context window can hold what every request carries, checked at start,
//! by `--check` and on every reload (whose plugins may ask for more): a window smaller than the system prompt, the tool definitions and the
//! output reserve together would refuse every call, however short the conversation.

use super::turn::prepare::prepare;
use crate::config::{Config, ConfigError};
use crate::events::NoEvents;
use crate::mcp::McpSet;
use crate::model::tokens::TokenBudget;
use crate::plugins::{CallContext, PluginSet, ProvideMemo};
use crate::state::StateBag;

/// The session id the check's `provide` calls are made for: no session's.
const CHECK_SESSION: &str = "context-window-check";

/// Whether `budget`'s window holds the fixed part of a new session's first request on
/// `config`, `plugins` and `mcp`'s tools; an error names the config file, `model.context_window` and both
/// numbers. Nothing to check without a window. The plugins' calls write to a bag of their
/// own, thrown away, and what they report is not shown: the turn reports it.
pub(super) async fn check_window(
    budget: &TokenBudget,
    config: &Config,
    plugins: &PluginSet,
    mcp: &McpSet,
) -> Result<(), ConfigError> {
    let Some(window) = budget.window else { return Ok(()) };
    let ctx = CallContext { session_id: CHECK_SESSION.to_owned(), ..CallContext::default() };
    let bag = StateBag::default();
    let instructions = &config.agent.instructions;
    // Two plugins offering one tool fail every turn, with their own error; the window is
    // checked on the base instructions alone then.
    let (system, tools) =
        match prepare(instructions, plugins, &ctx, &bag, &ProvideMemo::default(), &NoEvents).await {
            Ok(mut prepared) => match prepared.offer_mcp(mcp) {
                Ok(()) => (prepared.system, prepared.tools),
                Err(_) => (instructions.clone(), Vec::new()),
            },
            Err(_) => (instructions.clone(), Vec::new()),
        };
    let fixed = budget.fixed_tokens(&system, &tools);
    if fixed.total() <= u64::from(window) {
        return Ok(());
    }
    let model = &config.model;
    let what = match (model.context_window, model.known()) {
        (None, Some(known)) => format!("the default window of `{}` models, {window} tokens,", known.family),
        _ => format!("{window} tokens"),
    };
    Err(config.error_near(
        "model.context_window",
        "model.model",
        format!(
            "{what} cannot hold what every request carries, {} tokens: the system prompt and \
             tool definitions, {}, and the output reserve, {}. Set context_window to the \
             server's window, lower max_output_tokens, or load fewer plugins",
            fixed.total(),
            fixed.prompt,
            fixed.output_reserve
        ),
    ))
}
