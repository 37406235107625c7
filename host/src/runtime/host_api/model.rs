//! `model.complete`: the deployment's model, asked by a plugin granted `model = true`,
//! within the grant's token budgets and the calling plugin's own deadline. The runtime
//! knows no model client: whoever sets up the call hands it a [`ModelService`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::runtime::call::CallState;
use crate::state::PluginModelUsage;

/// Who speaks a message a plugin sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatRole {
    System,
    User,
    Assistant,
}

/// One message of a plugin's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
}

/// What the model answered, with its tokens as the endpoint counted them (or, where it
/// reported none, as the host estimated them: what the budget is charged either way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// One request, as the host sends it: the budgets checked, the wait bounded.
#[derive(Debug, Clone)]
pub struct ModelAsk {
    /// The asking plugin's name, for the record of the call.
    pub plugin: String,
    pub messages: Vec<ChatMessage>,
    /// The most tokens the reply may have: what the plugin asked for, within its grant.
    pub max_output_tokens: u32,
    /// The request's input tokens as the host estimated them before sending it: what the
    /// call is charged when the endpoint reports no usage.
    pub estimated_input_tokens: u64,
    /// How long the host may wait for the answer: what is left of the plugin's deadline.
    pub wait: Duration,
}

/// The model a call may ask, set up by the layer that knows the deployment's client; it
/// sends no tools, ever, and gives up after `ask.wait`.
pub trait ModelService: Send + Sync {
    /// The input tokens `messages` come to as a request, with the deployment's counter: what
    /// the budget is checked against before anything is sent.
    fn estimate_input(&self, messages: &[ChatMessage]) -> u64;

    fn complete(&self, ask: ModelAsk) -> Pin<Box<dyn Future<Output = Result<Completion, String>> + Send>>;

    /// The `plugin_model_call` events of the calls answered since the last take, in order.
    /// Kept by the service, not the plugin call's store: a call that fails (or is dropped at
    /// its deadline) after the model answered has still spent the tokens.
    fn take_events(&self) -> Vec<crate::events::Event>;

    /// The input and output tokens of every call this service answered: what a turn's meter
    /// counts of its plugins' model calls.
    fn tokens_spent(&self) -> u64;
}

/// A plugin's `model = true` grant and its budgets.
#[derive(Debug, Clone, Copy)]
pub struct ModelBudget {
    /// `model_tokens_per_call`: the most output tokens one call may ask for.
    pub tokens_per_call: u32,
    /// `model_tokens_per_session`: input and output tokens of all the plugin's calls in a session.
    pub tokens_per_session: u64,
}

/// What `model.complete` may do in one call: the grant's budgets and, when the call runs
/// for a session, the model to ask.
#[derive(Clone)]
pub struct ModelGrant {
    pub budget: ModelBudget,
    /// `None` where no session's model is at hand (loading, `status`).
    pub service: Option<Arc<dyn ModelService>>,
}

impl CallState {
    pub async fn complete(
        &mut self,
        messages: Vec<ChatMessage>,
        max_output_tokens: Option<u32>,
    ) -> Result<Completion, String> {
        let name = self.plugin.name.clone();
        let Some(grant) = self.model.clone() else {
            return Err(format!(
                "plugin `{name}` may not ask the model: grant it with `model = true` under its \
                 [plugin.grants] in config.toml"
            ));
        };
        let budget = grant.budget;
        if let Some(asked) = max_output_tokens
            && asked > budget.tokens_per_call
        {
            return Err(format!(
                "plugin `{name}` asked for up to {asked} output tokens, over its budget of {} per \
                 call (`model_tokens_per_call` under its [plugin.grants])",
                budget.tokens_per_call
            ));
        }
        let used = PluginModelUsage::of(&self.bag, &name);
        if used.tokens() >= budget.tokens_per_session {
            return Err(format!(
                "plugin `{name}` has spent its model budget for this session: {} of {} tokens in \
                 {} calls (`model_tokens_per_session` under its [plugin.grants])",
                used.tokens(),
                budget.tokens_per_session,
                used.calls
            ));
        }
        let Some(service) = grant.service else {
            return Err(format!("plugin `{name}` may ask the model only from a session's calls"));
        };
        // The request's own size counts against what is left, before it is sent: a check of
        // the tokens spent alone lets one large request spend any amount. A reply with no
        // limit asked is held to what is left.
        let left = budget.tokens_per_session - used.tokens();
        let input = service.estimate_input(&messages);
        let output = match max_output_tokens {
            Some(asked) => u64::from(asked),
            None => u64::from(budget.tokens_per_call).min(left.saturating_sub(input)),
        };
        if input.saturating_add(output.max(1)) > left {
            return Err(format!(
                "plugin `{name}`'s request comes to about {input} input tokens and up to {output} \
                 output tokens, more than the {left} tokens left of its model budget for this \
                 session ({} of {} spent; `model_tokens_per_session` under its [plugin.grants])",
                used.tokens(),
                budget.tokens_per_session
            ));
        }
        let ask = ModelAsk {
            plugin: name.clone(),
            messages,
            max_output_tokens: u32::try_from(output).expect("at most the per-call budget"),
            estimated_input_tokens: input,
            wait: self.deadline.time_left(),
        };
        let completion = service.complete(ask).await?;
        PluginModelUsage::add(&self.bag, &name, completion.input_tokens, completion.output_tokens);
        Ok(completion)
    }
}
