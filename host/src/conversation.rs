//! What a conversation is made of: messages, who said them, the tool calls they ask for,
//! and the history they form. Plain data that the store persists, the loop appends to and
//! the model clients send; it imports nothing from the rest of the crate but the tool call
//! ([`ToolCall`], from `crate::tools`), and carries no encoding or cache of any layer.

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::tools::ToolCall;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One message of a conversation, as stored in the history and sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the call this result answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self::text(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::text(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self { tool_calls, ..Self::text(Role::Assistant, content) }
    }

    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self { tool_call_id: Some(call_id.into()), ..Self::text(Role::Tool, content) }
    }

    fn text(role: Role, content: impl Into<String>) -> Self {
        Self { role, content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }
}

/// A conversation's messages in order, with a [`Revision`] that names its contents.
///
/// Appending keeps the revision: what was there before is unchanged. Any other change
/// (truncating, rewriting, replacing: compaction, say) goes through [`History::rewrite`],
/// which gives the history a revision no history in this process has had before. So
/// whatever was derived from a history's first messages under a revision (a wire encoding,
/// say) stays true of them for as long as the revision is the same.
#[derive(Debug)]
pub struct History {
    messages: Vec<Message>,
    revision: Revision,
}

/// Names one history's contents up to appends; see [`History`]. Unique within the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Revision(u64);

impl Revision {
    fn fresh() -> Self {
        static LAST: AtomicU64 = AtomicU64::new(0);
        Self(LAST.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

impl History {
    pub fn revision(&self) -> Revision {
        self.revision
    }

    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// Changes the messages in any way at all; the history gets a fresh revision.
    pub fn rewrite<R>(&mut self, change: impl FnOnce(&mut Vec<Message>) -> R) -> R {
        self.revision = Revision::fresh();
        change(&mut self.messages)
    }
}

impl Default for History {
    fn default() -> Self {
        Self::from(Vec::new())
    }
}

impl From<Vec<Message>> for History {
    fn from(messages: Vec<Message>) -> Self {
        Self { messages, revision: Revision::fresh() }
    }
}

/// Equal when the messages are; the revision names contents, it is not part of them.
impl PartialEq for History {
    fn eq(&self, other: &Self) -> bool {
        self.messages == other.messages
    }
}

impl Deref for History {
    type Target = [Message];

    fn deref(&self) -> &[Message] {
        &self.messages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appending_keeps_the_revision_and_any_other_change_replaces_it() {
        let mut history = History::from(vec![Message::user("one")]);
        let before = history.revision();
        history.push(Message::assistant("two", Vec::new()));
        assert_eq!(history.revision(), before, "an append leaves the first messages as they were");
        history.rewrite(|messages| messages.truncate(1));
        let truncated = history.revision();
        assert_ne!(truncated, before);
        history.rewrite(|messages| messages[0].content = "changed".into());
        assert_ne!(history.revision(), truncated);
        assert_eq!(&history[..], [Message::user("changed")]);
    }

    #[test]
    fn two_histories_never_share_a_revision() {
        let same = || History::from(vec![Message::user("same")]);
        let (first, second) = (same(), same());
        assert_eq!(first, second);
        assert_ne!(first.revision(), second.revision());
    }
}
