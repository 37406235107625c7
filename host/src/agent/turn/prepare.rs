//! Assembling one model call: the system prompt in config order, the union of the
//! plugins' tools (each plugin's declared ones, then what its `provide` returns) and the
//! MCP servers' tools, and this call's injected messages.

use std::sync::Arc;

use foldhash::HashMap;

use crate::agent::children::ChildLink;
use crate::agent::report::{forward_events, report_failure};
use crate::agent::{LiveSession, Snapshot, TurnError};
use crate::conversation::Message;
use crate::events::{Event, EventSink};
use crate::mcp::{McpServer, McpSet, McpTool};
use crate::model::ToolDefinition;
use crate::plugins::{CallContext, Exports, InjectedRole, LoadedPlugin, PluginSet, ProvideMemo, ToolSpec};
use crate::state::StateBag;
use crate::tools::{CompiledSchema, ToolCall};

/// Everything one model call needs from the plugins.
pub struct Prepared {
    pub system: String,
    pub tools: Vec<ToolDefinition>,
    pub offered: HashMap<String, OfferedTool>,
    pub injected: Vec<Message>,
    /// The views `provide` calls that moved their plugin's state brought with them.
    pub fresh_views: FreshViews,
}

/// Views calls brought with them, each with its plugin (see [`crate::plugins::FreshView`]).
pub type FreshViews = Vec<(Arc<LoadedPlugin>, crate::plugins::FreshView)>;

impl Prepared {
    /// Puts `tool` of `plugin` on offer; a name already on offer is the turn's error.
    fn offer(
        &mut self,
        plugin: &Arc<LoadedPlugin>,
        tool: &ToolSpec,
        schema: Arc<CompiledSchema>,
    ) -> Result<(), TurnError> {
        let owner = ToolOwner::Plugin(plugin.clone());
        self.put(&tool.name, &tool.description, OfferedTool { owner, mutates: tool.mutates, schema })
    }

    /// Puts the tools every ready server of `mcp` offers now on offer, after the plugins'.
    pub fn offer_mcp(&mut self, mcp: &McpSet) -> Result<(), TurnError> {
        for (server, tools) in mcp.tools() {
            for tool in tools.iter() {
                let owner = ToolOwner::Mcp { server: server.clone(), tool: tool.clone() };
                let offered = OfferedTool { owner, mutates: tool.mutates, schema: tool.schema.clone() };
                self.put(&tool.name, &tool.description, offered)?;
            }
        }
        Ok(())
    }

    fn put(&mut self, name: &str, description: &str, tool: OfferedTool) -> Result<(), TurnError> {
        if let Some(first) = self.offered.get(name) {
            return Err(TurnError::DuplicateTool {
                tool: name.to_owned(),
                first: first.owner.label(),
                second: tool.owner.label(),
            });
        }
        self.tools.push(ToolDefinition {
            name: name.to_owned(),
            description: description.to_owned(),
            parameters: tool.schema.schema.clone(),
        });
        self.offered.insert(name.to_owned(), tool);
        Ok(())
    }

    /// Whether any of `calls` is of a tool that changes things outside the agent's own
    /// bookkeeping. A call of a tool not on offer changes nothing: it is refused.
    /// Offers only the tools `allowed` names.
    fn keep_only(&mut self, allowed: &[String]) {
        self.tools.retain(|tool| allowed.contains(&tool.name));
        self.offered.retain(|name, _| allowed.contains(name));
    }

    pub fn any_mutating(&self, calls: &[ToolCall]) -> bool {
        calls.iter().any(|call| self.offered.get(&call.name).is_some_and(|tool| tool.mutates))
    }
}

/// A tool on offer for this call, and who runs it.
pub struct OfferedTool {
    pub owner: ToolOwner,
    pub mutates: bool,
    pub schema: Arc<CompiledSchema>,
}

/// Who runs an offered tool: a plugin, or an MCP server.
pub enum ToolOwner {
    Plugin(Arc<LoadedPlugin>),
    Mcp { server: Arc<McpServer>, tool: Arc<McpTool> },
}

impl ToolOwner {
    /// Who hooks, approvals and events say runs the call: the plugin's name, or
    /// `mcp:<server>` (which no plugin can be named: a plugin name holds no `:`).
    pub fn name(&self) -> String {
        match self {
            ToolOwner::Plugin(plugin) => plugin.name().to_owned(),
            ToolOwner::Mcp { server, .. } => format!("mcp:{}", server.name()),
        }
    }

    /// How errors name it.
    pub fn label(&self) -> String {
        match self {
            ToolOwner::Plugin(plugin) => plugin.label(),
            ToolOwner::Mcp { server, .. } => format!("MCP server `{}`", server.name()),
        }
    }
}

/// [`prepare`] for one model call of `session` on `snapshot`: its base instructions and
/// plugins, the session's bag and its memo of reusable contributions; then the tools of the
/// deployment's MCP servers and of those attached to the session alone. A child agent's
/// session (contract 0.2.8) has its own base instructions when its start gave some, and is
/// offered only the tools its link names.
pub(in crate::agent) async fn prepare_call(
    snapshot: &Snapshot,
    ctx: &CallContext,
    session: &LiveSession,
    sink: &dyn EventSink,
) -> Result<Prepared, TurnError> {
    let link = ChildLink::of(session.bag());
    let own = link.as_ref().and_then(|link| link.system_prompt.as_ref());
    let instructions = own.unwrap_or(&snapshot.config.agent.instructions);
    let mut prepared =
        prepare(instructions, &snapshot.plugins, ctx, session.bag(), session.provide_memo(), sink).await?;
    prepared.offer_mcp(&snapshot.mcp)?;
    if let Some(own) = session.own_mcp() {
        prepared.offer_mcp(own)?;
    }
    if let Some(link) = link {
        prepared.keep_only(&link.tools);
    }
    Ok(prepared)
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
        fresh_views: Vec::new(),
    };
    for plugin in set.plugins().iter() {
        for tool in plugin.declared_tools() {
            prepared.offer(plugin, &tool.spec, tool.schema.clone())?;
        }
        if !plugin.implements(Exports::PROVIDE) {
            continue;
        }
        let output = match plugin.provide(ctx, bag, memo).await {
            Ok(output) => output,
            Err(error) => {
                report_failure(sink, &error);
                continue;
            }
        };
        forward_events(sink, plugin, output.events);
        prepared.fresh_views.extend(output.view.map(|view| (plugin.clone(), view)));
        let contribution = &*output.value;
        if let Some(instructions) =
            contribution.instructions.as_deref().filter(|text| !text.trim().is_empty())
        {
            prepared.system.push_str("\n\n");
            prepared.system.push_str(instructions.trim_end());
        }
        for tool in &contribution.tools {
            let schema = match plugin.schema(&tool.parameters) {
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
            prepared.offer(plugin, tool, schema)?;
        }
        for message in &contribution.messages {
            let injected = match message.role {
                InjectedRole::System => Message::system(message.content.clone()),
                InjectedRole::User => Message::user(message.content.clone()),
            };
            sink.emit(&Event::InjectedMessage {
                plugin: plugin.name().to_owned(),
                role: injected.role,
                content: message.content.clone(),
            });
            prepared.injected.push(injected);
        }
    }
    Ok(prepared)
}
