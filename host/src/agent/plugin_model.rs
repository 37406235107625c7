//! The deployment's model client as `model.complete` reaches it: one request per call, with
//! no tools, the plugin's system messages as the system prompt, within the wait the runtime
//! allows; every answer recorded as a `plugin_model_call` event for the caller to forward.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::events::{Event, TokenUsage};
use crate::model::tokens::{ContextAccount, TokenBudget};
use crate::model::{History, HistoryEncodings, Message, ModelClient, ModelRequest};
use crate::plugins::ModelAccess;
use crate::runtime::host_api::{ChatMessage, ChatRole, Completion, ModelAsk, ModelService};
use crate::unpoisoned::LockUnpoisoned as _;

/// The model the plugin calls of one session may ask. Cheap to clone; the events of the
/// calls it served wait in it until [`ModelService::take_events`].
#[derive(Clone)]
pub struct PluginModel {
    inner: Arc<Inner>,
}

struct Inner {
    client: ModelClient,
    /// What requests are counted with: the deployment's counter, no output reserve.
    budget: TokenBudget,
    session_id: String,
    /// Kept apart from the plugin call's own output: a call that fails after the model
    /// answered has still spent the tokens, and the record must say so.
    events: Mutex<Vec<Event>>,
    /// Every answered call's input and output tokens, summed.
    tokens: AtomicU64,
}

impl std::fmt::Debug for PluginModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginModel").field("session_id", &self.inner.session_id).finish_non_exhaustive()
    }
}

impl PluginModel {
    /// What a session's plugin calls are given to reach `client` through, their requests
    /// counted as `budget` counts the agent's.
    pub fn access(client: ModelClient, budget: TokenBudget, session_id: impl Into<String>) -> ModelAccess {
        let budget = TokenBudget { output_reserve: 0, ..budget };
        let inner = Inner {
            client,
            budget,
            session_id: session_id.into(),
            events: Mutex::new(Vec::new()),
            tokens: AtomicU64::new(0),
        };
        ModelAccess(Arc::new(Self { inner: Arc::new(inner) }))
    }

    /// A plugin's request: its own conversation, with no tools and nothing injected.
    fn request<'a>(
        &'a self,
        system: &'a str,
        history: &'a History,
        max_output_tokens: Option<u32>,
    ) -> ModelRequest<'a> {
        ModelRequest {
            session_id: &self.inner.session_id,
            system,
            history,
            injected: &[],
            tools: &[],
            max_output_tokens,
            model: None,
        }
    }

    async fn ask(self, ask: ModelAsk) -> Result<Completion, String> {
        let (system, history) = conversation(ask.messages);
        let request = self.request(&system, &history, Some(ask.max_output_tokens));
        let started = Instant::now();
        // A fresh cache: the plugin's messages are not the session's history.
        let mut encodings = HistoryEncodings::default();
        let mut ignore_text = |_: &str| {};
        let call = self.inner.client.complete(&request, &mut encodings, &mut ignore_text);
        let reply = match tokio::time::timeout(ask.wait, call).await {
            Ok(reply) => reply.map_err(|error| format!("the model failed: {error}"))?,
            Err(_) => {
                return Err(format!(
                    "the model did not answer within {} ms, what was left of plugin `{}`'s \
                     deadline (`timeout_ms` under its [plugin.limits])",
                    ask.wait.as_millis(),
                    ask.plugin
                ));
            }
        };
        // An endpoint that reports no usage is charged the estimate: counted as nothing, its
        // calls would never reach the budget.
        let usage = reply.usage.unwrap_or_else(|| TokenUsage {
            input_tokens: ask.estimated_input_tokens,
            output_tokens: ContextAccount::default()
                .tokens_of(&self.inner.budget, &Message::assistant(reply.text.clone(), Vec::new())),
            ..TokenUsage::default()
        });
        self.inner
            .tokens
            .fetch_add(usage.input_tokens.saturating_add(usage.output_tokens), Ordering::Relaxed);
        let event = Event::PluginModelCall {
            plugin: ask.plugin,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        };
        self.inner.events.lock_unpoisoned().push(event);
        Ok(Completion {
            text: reply.text,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
        })
    }
}

impl ModelService for PluginModel {
    fn estimate_input(&self, messages: &[ChatMessage]) -> u64 {
        let (system, history) = conversation(messages.to_vec());
        let request = self.request(&system, &history, None);
        ContextAccount::default().estimate(&self.inner.budget, &request, None).prompt_tokens
    }

    fn complete(&self, ask: ModelAsk) -> Pin<Box<dyn Future<Output = Result<Completion, String>> + Send>> {
        Box::pin(self.clone().ask(ask))
    }

    fn take_events(&self) -> Vec<Event> {
        std::mem::take(&mut *self.inner.events.lock_unpoisoned())
    }

    fn tokens_spent(&self) -> u64 {
        self.inner.tokens.load(Ordering::Relaxed)
    }
}

/// The system prompt (every system message, in order, a blank line apart) and the rest as
/// a history.
fn conversation(messages: Vec<ChatMessage>) -> (String, History) {
    let mut system: Vec<String> = Vec::new();
    let mut history = History::default();
    for message in messages {
        match message.role {
            ChatRole::System => system.push(message.content),
            ChatRole::User => history.push(Message::user(message.content)),
            ChatRole::Assistant => history.push(Message::assistant(message.content, Vec::new())),
        }
    }
    (system.join("\n\n"), history)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_messages_become_the_system_prompt_and_the_rest_the_history_in_order() {
        let message = |role, content: &str| ChatMessage { role, content: content.to_owned() };
        let (system, history) = conversation(vec![
            message(ChatRole::System, "be brief"),
            message(ChatRole::User, "summarise"),
            message(ChatRole::System, "no lists"),
            message(ChatRole::Assistant, "a summary"),
        ]);
        assert_eq!(system, "be brief\n\nno lists");
        let kept: Vec<&Message> = history.iter().collect();
        assert_eq!(kept, [&Message::user("summarise"), &Message::assistant("a summary", Vec::new())]);
    }
}
