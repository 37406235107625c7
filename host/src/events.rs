//! The event stream: everything a front end renders, in one documented type.
//!
//! `--json` writes each event as one JSON line, `{"type": "...", ...}`; the console renders
//! the same events as text. Plugin events (`todos-changed`, `mode-changed`, …) arrive as
//! [`Event::Plugin`] with the plugin's own payload.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// A plugin event's payload: JSON text, checked when the plugin emitted it and kept as that
/// text. Most sinks never look inside (`--json` writes it out compacted onto its line), and
/// parsing every payload into a tree was a tenth of a tool call's time in the load bench;
/// [`Payload::value`] parses it for those that do.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct Payload(Box<RawValue>);

impl Payload {
    /// The payload as a JSON tree.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).expect("a payload is JSON: checked when it was made")
    }

    /// The payload's JSON text, as the plugin wrote it.
    pub fn text(&self) -> &str {
        self.0.get()
    }
}

impl From<Box<RawValue>> for Payload {
    fn from(json: Box<RawValue>) -> Self {
        Self(json)
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

/// One thing that happened. Serialized with a `type` tag in snake_case.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A session is ready: new (`resumed: false`) or loaded from the store.
    SessionStarted { session_id: String, resumed: bool },
    /// The operator's prompt, as stored.
    UserMessage { text: String },
    /// A message a plugin added to the next model call only.
    InjectedMessage { plugin: String, role: String, content: String },
    /// A model call is about to be made (`iteration` counts from 1 within the turn).
    ModelRequest { iteration: u32, tools: usize, messages: usize },
    /// A piece of the model's reply text, as it streams.
    AssistantDelta { text: String },
    /// The model's complete reply.
    AssistantMessage { text: String, tool_calls: Vec<ToolCallEvent> },
    /// A tool call is about to run (after hooks allowed it).
    ToolCall { id: String, name: String, plugin: String, arguments: Value },
    /// A hook or the operator refused or questioned a call.
    ToolDecision { id: String, name: String, decision: String, reason: String, decided_by: String },
    /// An `ask` verdict is put to the operator (or to `agent.on_ask` when nobody can answer).
    ApprovalRequested {
        id: String,
        name: String,
        plugin: String,
        arguments: Value,
        reason: String,
        asked_by: String,
    },
    /// The answer to an approval request: `allow_once`, `allow_tool_always`,
    /// `allow_exact_always`, `deny` or `unanswerable`, with the operator's reason if any.
    ApprovalAnswered {
        id: String,
        name: String,
        answer: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A tool call's result as the model will see it.
    ToolResult { id: String, name: String, ok: bool, output: String },
    /// A `stop` hook kept the turn going with a message for the model.
    Continued { plugin: String, message: String },
    /// A `user-prompt-submit` hook refused the prompt.
    PromptBlocked { plugin: String, reason: String },
    /// A plugin's own event.
    Plugin {
        plugin: String,
        kind: String,
        payload: Payload,
        /// How a person should see it, as the plugin gave it; `None`: show nothing.
        #[serde(skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    /// Something went wrong; the session carries on unless the turn ended.
    Error {
        message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        plugin: Option<String>,
    },
    /// The turn is over.
    TurnEnded { reason: String, iterations: u32 },
    /// A crate-folder plugin is being built: one step of cargo's progress, such as
    /// `Compiling triage-modes v0.1.0 (...)`.
    PluginBuilding { path: String, progress: String },
    /// A plugin was loaded or reloaded.
    PluginLoaded { plugin: String, path: String, hash: String, cached: bool },
    /// A new version of a plugin was refused; the old one keeps serving.
    PluginRejected { path: String, error: String },
}

impl Event {
    /// The `plugin_loaded` event for `plugin`.
    pub fn plugin_loaded(plugin: &crate::plugins::LoadedPlugin) -> Self {
        let identity = plugin.identity();
        Event::PluginLoaded {
            plugin: plugin.label(),
            path: identity.path.display().to_string(),
            hash: identity.hash.clone(),
            cached: plugin.cache_hit(),
        }
    }
}

/// A tool call as shown in [`Event::AssistantMessage`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallEvent {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Where events go: the console, a JSON-lines writer, a test's collector.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: &Event);
}

/// Drops every event.
pub struct NoEvents;

impl EventSink for NoEvents {
    fn emit(&self, _event: &Event) {}
}

/// Shows plugin build progress on stderr and drops every other event: for the start-up
/// load, before any front end exists.
pub struct BuildProgressOnStderr;

impl EventSink for BuildProgressOnStderr {
    fn emit(&self, event: &Event) {
        if let Event::PluginBuilding { path, progress } = event {
            // Cargo's output passes on what a plugin crate's build script prints.
            let escape = crate::sanitize::one_line;
            eprintln!("  building plugin {}: {}", escape(path), escape(progress));
        }
    }
}

/// Keeps every event, in order (tests, `agent-host bench`).
#[derive(Default)]
pub struct CollectEvents {
    events: std::sync::Mutex<Vec<Event>>,
}

impl CollectEvents {
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl EventSink for CollectEvents {
    fn emit(&self, event: &Event) {
        self.events.lock().unwrap_or_else(|p| p.into_inner()).push(event.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_payload_goes_out_as_the_plugin_wrote_it_and_parses_on_demand() {
        let text = r#"{"to":"execute","from":"plan"}"#;
        let payload = Payload::from(RawValue::from_string(text.to_owned()).unwrap());
        let event = Event::Plugin {
            plugin: "agent-mode".into(),
            kind: "mode-changed".into(),
            payload,
            display: None,
        };
        let line = serde_json::to_string(&event).unwrap();
        assert!(line.ends_with(&format!(r#""payload":{text}}}"#)), "{line}");
        let Event::Plugin { payload, .. } = &event else { unreachable!() };
        assert_eq!(payload.value(), serde_json::json!({"from": "plan", "to": "execute"}));
        assert_eq!(payload.clone(), *payload);
    }
}
