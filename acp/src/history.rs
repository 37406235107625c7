//! A stored session's history replayed as the updates that told it (`session/load`): the
//! prompts as user chunks, replies as agent chunks, each tool call with its result.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields,
};

use super::tool_kind;
use agent_host::agent::Host;
use agent_host::conversation::{Message, Role};

pub fn replay(host: &Host, messages: &[Message]) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    for message in messages {
        let chunk = || ContentChunk::new(ContentBlock::from(message.content.clone()));
        match message.role {
            Role::System => {}
            Role::User => updates.push(SessionUpdate::UserMessageChunk(chunk())),
            Role::Assistant => {
                if !message.content.is_empty() {
                    updates.push(SessionUpdate::AgentMessageChunk(chunk()));
                }
                for call in &message.tool_calls {
                    let arguments = serde_json::from_str(&call.arguments).unwrap_or(serde_json::Value::Null);
                    updates.push(SessionUpdate::ToolCall(
                        ToolCall::new(call.id.clone(), call.name.clone())
                            .kind(tool_kind::of(host, &call.name))
                            .status(ToolCallStatus::Pending)
                            .raw_input(arguments),
                    ));
                }
            }
            Role::Tool => {
                let Some(id) = &message.tool_call_id else { continue };
                let content = vec![ToolCallContent::from(ContentBlock::from(message.content.clone()))];
                updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id.clone(),
                    ToolCallUpdateFields::new().status(ToolCallStatus::Completed).content(content),
                )));
            }
        }
    }
    updates
}
