//! Assembling one model call: the system prompt in config order, the union of the
//! plugins' tools, and this call's injected messages.

use std::sync::Arc;

use foldhash::HashMap;

use super::TurnError;
use super::report::{forward_events, report_failure};
use crate::events::{Event, EventSink};
use crate::model::{Message, ToolDefinition};
use crate::plugins::{CallContext, Capabilities, LoadedPlugin, ProvideMemo, Role};
use crate::plugins::{CompiledSchema, PluginSet};
use crate::state::StateBag;

/// Everything one model call needs from the plugins.
pub struct Prepared {
    pub system: String,
    pub tools: Vec<ToolDefinition>,
    pub offered: HashMap<String, OfferedTool>,
    pub injected: Vec<Message>,
}

impl Prepared {
    /// Whether any of `calls` is of a tool that changes things outside the agent's own
    /// bookkeeping. A call of a tool not on offer changes nothing: it is refused.
    pub fn any_mutating(&self, calls: &[crate::model::ToolCallRequest]) -> bool {
        calls.iter().any(|call| self.offered.get(&call.name).is_some_and(|tool| tool.mutates))
    }
}

/// A tool on offer for this call, and who runs it.
pub struct OfferedTool {
    pub plugin: Arc<LoadedPlugin>,
    pub mutates: bool,
    pub schema: Arc<CompiledSchema>,
}

impl super::Host {
    /// [`prepare`] for one model call of `session`: the configured base instructions, the
    /// session's bag and its memo of reusable contributions.
    pub(super) async fn prepare_call(
        &self,
        set: &PluginSet,
        ctx: &CallContext,
        session: &crate::state::Session,
        sink: &dyn EventSink,
    ) -> Result<Prepared, TurnError> {
        prepare(&self.config().agent.instructions, set, ctx, session.bag(), session.provide_memo(), sink)
            .await
    }
}

pub async fn prepare(
    base_instructions: &str,
    set: &PluginSet,
    ctx: &CallContext,
    bag: &StateBag,
    memo: &ProvideMemo,
    sink: &dyn EventSink,
) -> Result<Prepared, TurnError> {
    let mut prepared = Prepared {
        system: base_instructions.to_owned(),
        tools: Vec::new(),
        offered: HashMap::default(),
        injected: Vec::new(),
    };
    for plugin in set.plugins().iter().filter(|p| p.implements(Capabilities::PROVIDE)) {
        let output = match plugin.provide(ctx, bag, memo).await {
            Ok(output) => output,
            Err(error) => {
                report_failure(sink, &error);
                continue;
            }
        };
        forward_events(sink, plugin, output.events);
        let contribution = &*output.value;
        if let Some(instructions) =
            contribution.instructions.as_deref().filter(|text| !text.trim().is_empty())
        {
            prepared.system.push_str("\n\n");
            prepared.system.push_str(instructions.trim_end());
        }
        for tool in &contribution.tools {
            if let Some(first) = prepared.offered.get(&tool.name) {
                return Err(TurnError::DuplicateTool {
                    tool: tool.name.clone(),
                    first: first.plugin.label(),
                    second: plugin.label(),
                });
            }
            let schema = match set.schema(&tool.parameters) {
                Ok(schema) => schema,
                Err(error) => {
                    sink.emit(&Event::Error {
                        message: format!(
                            "plugin {} offered tool `{}` with an unusable JSON Schema ({error}); the tool is left out",
                            plugin.label(),
                            tool.name
                        ),
                        plugin: Some(plugin.label()),
                    });
                    continue;
                }
            };
            prepared.tools.push(ToolDefinition {
                name: tool.name.clone(),
                description: tool.description.clone(),
                parameters: schema.schema.clone(),
            });
            prepared.offered.insert(
                tool.name.clone(),
                OfferedTool { plugin: plugin.clone(), mutates: tool.mutates, schema },
            );
        }
        for message in &contribution.messages {
            let (name, injected) = match message.role {
                Role::System => ("system", Message::system(message.content.clone())),
                Role::User => ("user", Message::user(message.content.clone())),
            };
            sink.emit(&Event::InjectedMessage {
                plugin: plugin.name().to_owned(),
                role: name.to_owned(),
                content: message.content.clone(),
            });
            prepared.injected.push(injected);
        }
    }
    Ok(prepared)
}
