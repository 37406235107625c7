//! The host's events as ACP session updates: the reply and its reasoning as chunks, each
//! tool call as `tool_call` then `tool_call_update`s, views as plan and modes, child agents
//! as [`Children`] shows them.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CompactionStatus, CompactionUpdate, ContentBlock, ContentChunk, Diff, SessionNotification, SessionUpdate,
    ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, UsageUpdate,
};
use serde_json::Value;

use super::children::Children;
use super::takes::Takes;
use super::{tool_kind, views};
use agent_host::agent::Host;
use agent_host::events::{Event, EventSink, FileEdit};
use agent_host::unpoisoned::LockUnpoisoned as _;

/// Sends one session's events to the client as `session/update` notifications.
pub struct Updates {
    host: Arc<Host>,
    cx: ConnectionTo<Client>,
    session_id: String,
    /// Calls already announced with `tool_call` (an ask announces a call before it runs).
    announced: Mutex<HashSet<String>>,
    /// What the client said it takes.
    takes: Takes,
    /// The session's child agents, as the client is shown them.
    children: Arc<Children>,
    /// The files each running call changed, sent as diffs with its result.
    edits: Mutex<HashMap<String, Vec<FileEdit>>>,
    /// What the client was last told of the views, so only changes are sent.
    pub shown: Arc<Mutex<views::Shown>>,
}

impl Updates {
    pub fn new(
        host: Arc<Host>,
        cx: ConnectionTo<Client>,
        session_id: String,
        shown: Arc<Mutex<views::Shown>>,
        takes: Takes,
        children: Arc<Children>,
    ) -> Self {
        Self {
            host,
            cx,
            session_id,
            takes,
            children,
            announced: Mutex::new(HashSet::new()),
            edits: Mutex::new(HashMap::new()),
            shown,
        }
    }

    /// The updates of child agent `id`'s own session: its own calls and views, and no
    /// children of its own (its parent's registry keeps the whole family).
    pub fn for_child(&self, id: &str) -> Self {
        let shown = Arc::new(Mutex::new(views::Shown::default()));
        Self::new(self.host.clone(), self.cx.clone(), id.to_owned(), shown, self.takes, Arc::default())
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn takes(&self) -> Takes {
        self.takes
    }

    pub fn send(&self, update: SessionUpdate) {
        self.send_to(&self.session_id, update);
    }

    /// Sends `update` under session `session_id`: this one's, or one of its child agents'.
    pub fn send_to(&self, session_id: &str, update: SessionUpdate) {
        if let Err(error) = self.cx.send_notification(SessionNotification::new(session_id.to_owned(), update))
        {
            tracing::debug!(error = %error, "a session update could not be sent");
        }
    }

    /// Announces call `id` once, as pending.
    pub fn announce(&self, id: &str, name: &str, arguments: &Value) {
        if !self.announced.lock_unpoisoned().insert(id.to_owned()) {
            return;
        }
        let call = ToolCall::new(id.to_owned(), name.to_owned())
            .kind(tool_kind::of(&self.host, name))
            .status(ToolCallStatus::Pending)
            .raw_input(arguments.clone());
        self.send(SessionUpdate::ToolCall(call));
    }

    fn status(&self, id: &str, fields: ToolCallUpdateFields) {
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_owned(), fields)));
    }
}

/// An edit as the editor's diff of the file; none when its texts were left out (no diff to
/// show). A deleted file's new text is empty.
fn diff(edit: FileEdit) -> Option<ToolCallContent> {
    if edit.texts_left_out {
        return None;
    }
    let diff = Diff::new(edit.path, edit.after.unwrap_or_default()).old_text(edit.before);
    Some(ToolCallContent::Diff(diff))
}

fn text(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text.to_owned()))
}

impl EventSink for Updates {
    fn emit(&self, event: &Event) {
        match event {
            Event::AssistantDelta { text: delta } if !delta.is_empty() => {
                self.send(SessionUpdate::AgentMessageChunk(text(delta)));
            }
            Event::AssistantMessage { reasoning: Some(reasoning), .. } if !reasoning.is_empty() => {
                self.send(SessionUpdate::AgentThoughtChunk(text(reasoning)));
            }
            Event::ModelRequest { context, .. } => {
                if let Some(window) = context.window {
                    self.send(SessionUpdate::UsageUpdate(UsageUpdate::new(context.estimated_tokens, window)));
                }
            }
            Event::ApprovalRequested { id, name, arguments, .. } => self.announce(id, name, arguments),
            Event::ToolCall { id, name, arguments, refused, .. } => {
                self.announce(id, name, arguments);
                // A refused call never runs: pending until its result says it failed.
                if !refused {
                    self.status(id, ToolCallUpdateFields::new().status(ToolCallStatus::InProgress));
                }
            }
            Event::FileEdited { id, edit } => {
                self.edits.lock_unpoisoned().entry(id.clone()).or_default().push(edit.clone());
            }
            Event::ToolResult { id, ok, output, .. } => {
                let status = if *ok { ToolCallStatus::Completed } else { ToolCallStatus::Failed };
                let edits = self.edits.lock_unpoisoned().remove(id).unwrap_or_default();
                let mut content: Vec<ToolCallContent> = edits.into_iter().filter_map(diff).collect();
                content.push(ToolCallContent::from(ContentBlock::from(output.clone())));
                self.status(id, ToolCallUpdateFields::new().status(status).content(content));
            }
            Event::Compacted { strategy, note, tokens_before, tokens_after, replaced, summaries, .. }
                if self.takes.compaction =>
            {
                let summary = format!(
                    "{strategy}: {note} ({replaced} messages in {summaries}; ~{tokens_before} → ~{tokens_after} tokens)"
                );
                let update =
                    CompactionUpdate::new(uuid::Uuid::new_v4().to_string(), CompactionStatus::Completed)
                        .summary(vec![ContentBlock::from(summary)]);
                self.send(SessionUpdate::CompactionUpdate(update));
            }
            Event::ViewChanged { view } => {
                let updates = self.shown.lock_unpoisoned().changed(view);
                for update in updates {
                    self.send(update);
                }
            }
            Event::SubagentStarted { .. } | Event::Subagent { .. } | Event::SubagentEnded { .. } => {
                self.children.emit(self, event);
            }
            _ => {}
        }
    }
}
