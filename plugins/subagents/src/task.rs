//! `task`: starts a child agent from a listed definition and hands the call's result over to
//! the child's final answer. The definition is read again, so the child runs what the file
//! says now; whatever refuses the child (the file, the grant, the host's caps, a tool the
//! parent lacks) is the call's error, naming the file to fix.

use std::path::Path;

use agent_host_sdk::agents::{self, AgentSpec, Context as AgentContext};
use agent_host_sdk::{Context, log};
use folder_catalog::FolderCatalog;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::catalog::{Agent, Catalog};
use crate::config::Config;
use crate::definition::{self, Definition, Read};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskArgs {
    /// The agent's name, as the list of agents gives it
    agent: String,
    /// The task, with everything the agent needs to know to do it
    prompt: String,
    /// `fresh` (the default): the agent starts from the prompt alone; `fork`: from a copy of
    /// this conversation, then the prompt
    #[serde(default)]
    context: ContextArg,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContextArg {
    #[default]
    Fresh,
    Fork,
}

pub fn task(ctx: &Context<Config>, args: TaskArgs) -> Result<String, String> {
    if args.prompt.trim().is_empty() {
        return Err("`prompt` is blank; say what the agent is to do".to_owned());
    }
    let catalog = Catalog::current(&ctx.config)?;
    let agent = catalog.find(args.agent.trim())?;
    let found = reread(agent, &ctx.config)?;
    let spec = spec(found, args.prompt, args.context);
    let id = agents::start(&spec).map_err(|error| refused(agent, &error))?;
    if let Err(error) = agents::wait(&id) {
        // Started but not waited for, its answer would reach no one: it must not run.
        let _ = agents::cancel(&id);
        return Err(refused(agent, &error));
    }
    Ok(format!(
        "agent `{}` started as session {id}; its final answer replaces this text when it is done",
        agent.name
    ))
}

/// The agent's definition as its file says it now.
fn reread(agent: &Agent, config: &Config) -> Result<Definition, String> {
    let cannot = |why: String| format!("agent `{}` cannot be started now: {}: {why}", agent.name, agent.path);
    match definition::read_file(Path::new(&agent.path), agent.format, config) {
        Ok(Read::Offered(found)) if found.name == agent.name => Ok(found),
        Ok(Read::Offered(found)) => Err(cannot(format!(
            "it now names the agent `{}`; run /agents to find the agents anew",
            found.name
        ))),
        Ok(Read::NotOffered(why)) => Err(cannot(format!("it is no longer offered: {why}"))),
        Err(rules) => Err(cannot(rules.join("; "))),
    }
}

/// What the child is started with: the definition's narrowing, and the task.
fn spec(found: Definition, prompt: String, context: ContextArg) -> AgentSpec {
    AgentSpec {
        name: found.name,
        prompt,
        system_prompt: found.system_prompt,
        tools: found.tools,
        model: found.model,
        mode: found.mode,
        max_turns: found.max_turns,
        context: match context {
            ContextArg::Fresh => AgentContext::Fresh,
            ContextArg::Fork => AgentContext::Fork,
        },
    }
}

/// The host's refusal, with the file that asked for it: the operator fixes the file (a tool
/// this deployment does not offer, a model it does not serve) or the grant.
fn refused(agent: &Agent, error: &str) -> String {
    let line = format!("agent `{}` ({}) could not be started: {error}", agent.name, agent.path);
    log::warn(&line);
    line
}
