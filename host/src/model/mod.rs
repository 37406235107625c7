//! Model clients: an OpenAI-compatible Chat Completions client (streaming, retries), an
//! Anthropic Messages client (streaming, prompt caching, retries) and a scripted one that
//! replays a file of turns for demos and tests.

mod anthropic;
mod deadline;
mod encodings;
mod error;
mod history_encodings;
pub mod http;
mod openai;
mod probe;
mod retry;
mod scripted;
mod sse;
pub mod tokens;
mod types;

use std::sync::Arc;

pub use anthropic::AnthropicClient;
pub use error::ModelError;
pub use history_encodings::{HistoryEncodings, PerMessage};
pub use openai::{OpenAiClient, ReplyAssembler, read_event_stream};
pub use probe::{ProbeError, probe};
pub use scripted::ScriptedModel;
pub use types::{ModelReply, ModelRequest, StopReason, ToolDefinition};

/// The messages the model clients send and receive, for callers that talk to a model.
pub use crate::conversation::{History, Message, Role};

use crate::config::{Config, Provider};

/// The configured model client.
#[derive(Clone)]
pub enum ModelClient {
    OpenAi(Arc<OpenAiClient>),
    Anthropic(Arc<AnthropicClient>),
    Scripted(Arc<ScriptedModel>),
}

impl ModelClient {
    /// The client `config` asks for, or `None` when it names no endpoint at all (no
    /// `base_url`, no `OPENAI_BASE_URL`, no API key) — the caller then runs the demo.
    pub fn from_config(config: &Config) -> anyhow::Result<Option<Self>> {
        match config.model.provider {
            Provider::Scripted => {
                let script = config.model.script.as_ref().expect("validated at load");
                let path = config.resolve(script.get_ref());
                Ok(Some(Self::Scripted(Arc::new(ScriptedModel::from_file(&path)?))))
            }
            Provider::Openai => {
                Ok(OpenAiClient::from_config(&config.model)?.map(|client| Self::OpenAi(Arc::new(client))))
            }
            Provider::Anthropic => {
                let client = AnthropicClient::from_config(&config.model)?;
                Ok(Some(Self::Anthropic(Arc::new(client))))
            }
        }
    }

    /// One model call. Text is passed to `on_text` as it streams in. `encodings` are the
    /// session's own, kept for the history in `request` from one call to the next.
    pub async fn complete(
        &self,
        request: &ModelRequest<'_>,
        encodings: &mut HistoryEncodings,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, ModelError> {
        match self {
            Self::OpenAi(client) => client.complete(request, encodings, on_text).await,
            Self::Anthropic(client) => client.complete(request, encodings, on_text).await,
            Self::Scripted(script) => script.complete(request, on_text),
        }
    }

    /// A short description for banners: `openai gpt-4.1 at http://…` or `scripted demo.toml`.
    pub fn describe(&self) -> String {
        match self {
            Self::OpenAi(client) => client.describe(),
            Self::Anthropic(client) => client.describe(),
            Self::Scripted(script) => script.describe(),
        }
    }
}
