//! What the compaction hooks are called with: a history and a budget.

use crate::compaction::{
    CompactionBudget, CompactionReason, HistoryMessage, MessageId, MessageRole, RequestedCall,
};

/// A history as `compact` receives it, built message by message. Each message is named by
/// its position (`message(0)`, `message(1)`, ...) unless it is an earlier compaction's
/// [`summary`](Self::summary), and sized as its bytes (text, calls' names and arguments) / 4
/// + 4 tokens.
#[derive(Debug, Clone, Default)]
pub struct History {
    messages: Vec<HistoryMessage>,
}

impl History {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn system(self, content: &str) -> Self {
        self.push(MessageRole::System, content, Vec::new(), None)
    }

    pub fn user(self, content: &str) -> Self {
        self.push(MessageRole::User, content, Vec::new(), None)
    }

    /// An assistant message without tool calls.
    pub fn assistant(self, content: &str) -> Self {
        self.push(MessageRole::Assistant, content, Vec::new(), None)
    }

    /// An assistant message with `content` making `calls`, each `(id, name, arguments)`.
    pub fn calls(self, content: &str, calls: &[(&str, &str, &str)]) -> Self {
        let calls = calls
            .iter()
            .map(|&(id, name, arguments)| RequestedCall {
                id: id.to_owned(),
                name: name.to_owned(),
                arguments: arguments.to_owned(),
            })
            .collect();
        self.push(MessageRole::Assistant, content, calls, None)
    }

    /// A tool's result answering the call `call_id`.
    pub fn result(self, call_id: &str, content: &str) -> Self {
        self.push(MessageRole::Tool, content, Vec::new(), Some(call_id.to_owned()))
    }

    /// The summary `number` an earlier compaction wrote, sent now in this place.
    pub fn summary(mut self, number: u64, role: MessageRole, content: &str) -> Self {
        self = self.push(role, content, Vec::new(), None);
        if let Some(last) = self.messages.last_mut() {
            last.id = MessageId::Summary(number);
        }
        self
    }

    /// Sets the last message's size in tokens.
    pub fn tokens(mut self, tokens: u32) -> Self {
        if let Some(last) = self.messages.last_mut() {
            last.tokens = tokens;
        }
        self
    }

    /// The messages, in order.
    pub fn build(self) -> Vec<HistoryMessage> {
        self.messages
    }

    fn push(
        mut self,
        role: MessageRole,
        content: &str,
        tool_calls: Vec<RequestedCall>,
        tool_call_id: Option<String>,
    ) -> Self {
        let stored = self.messages.iter().filter(|m| matches!(m.id, MessageId::Message(_))).count();
        let bytes = content.len()
            + tool_calls.iter().map(|call| call.name.len() + call.arguments.len()).sum::<usize>();
        let tokens = u32::try_from(bytes / 4 + 4).unwrap_or(u32::MAX);
        self.messages.push(HistoryMessage {
            id: MessageId::Message(stored as u64),
            role,
            content: content.to_owned(),
            tool_calls,
            tool_call_id,
            tokens,
        });
        self
    }
}

/// A budget as the host would set it for `history` under a window of `context_window`
/// tokens, with `limit` the most the history may take after: the reason `threshold`, no
/// output reserve, nothing fixed, a truncation target of `limit`, nothing to keep. Set the
/// fields to ask otherwise.
pub fn budget(history: &[HistoryMessage], context_window: u32, limit: u32) -> CompactionBudget {
    CompactionBudget {
        reason: CompactionReason::Threshold,
        context_window,
        max_output_tokens: 0,
        fixed_tokens: 0,
        history_tokens: history.iter().map(|message| message.tokens).sum(),
        limit,
        target: limit,
        keep: Vec::new(),
    }
}
