//! The `subagents` plugin: agents the model can hand a task to. An agent is defined by a
//! Markdown file, YAML frontmatter (`name`, `description`, `tools`, `model`, `mode`,
//! `max_turns`) then the child's system prompt; Claude Code's, OpenCode's and Gemini CLI's
//! definitions are read too, each mapped to ours (docs/plugins/subagents.md says field by
//! field). The plugin finds the definitions once per session, lists each agent by name and
//! description in the system prompt, and gives the model one tool, `task` (`agent`, `prompt`,
//! optionally `context = "fork"`), which starts a child session through the `agents` import
//! (contract 0.2.8) and hands the call's result over to the child's final answer. A
//! definition with a problem is reported, by path and every problem, and skipped; the others
//! still load.
//!
//! ```toml
//! [plugin.config]
//! dirs = ["/user-agents",                                  # the operator's, in our format ...
//!         { path = "/claude-agents", format = "claude" }]  # ... or another's (claude, opencode, gemini)
//! trust_project = false    # the workspace's .agents/agents, .claude/agents, .opencode/agents
//!                          # and .gemini/agents, read only when trusted
//! workspace = "/workspace" # where the workspace is in the plugin's sandbox
//! models = { sonnet = "claude-sonnet-4-5" }   # a definition's model, as written, to the endpoint's
//! all_tools = ["read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "shell"]
//!                          # what "every tool but ..." keeps: a plugin cannot see its session's tools
//! listing_kb = 4           # the list of agents' share of the system prompt
//! [plugin.grants]
//! agents = true            # starting children
//! ```
//!
//! The plugin reads only the folders granted to it (`[plugin.grants.dirs]`, the workspace
//! included); a child is a session of the deployment, held to `[agent]`'s caps on depth and
//! parallel children, and offered no tool its parent is not.

mod catalog;
mod config;
mod definition;
mod format;
mod formats;
mod listing;
mod models;
mod prompt;
mod scan;
mod task;
mod tools;

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

use agent_host_sdk::prelude::*;
use folder_catalog::FolderCatalog;

use catalog::Catalog;
use config::Config;

/// The plugin's declaration.
pub fn plugin() -> Plugin<Config> {
    Plugin::new("subagents", env!("CARGO_PKG_VERSION"))
        .configure(config::configure)
        .on_session_start(folder_catalog::session_start::<Catalog>)
        .provide(folder_catalog::provide::<Catalog>)
        .tool(Tool::new(
            "task",
            "Hands a task to one of the agents listed under Agents in your instructions: it runs as a \
             session of its own, with its own instructions and tools, and its final answer becomes \
             this call's result.",
            task::task,
        ))
        .command(Command::new("agents", "/agents", "Lists the agents, finding them anew", agents_command))
}

/// `/agents`: finds the agents anew (a definition added or fixed since the session started)
/// and lists them.
fn agents_command(ctx: &Context<Config>, _args: &str) -> Result<String, String> {
    let catalog = Catalog::rescan(&ctx.config)?;
    Ok(listing::plain(&catalog))
}

agent_host_sdk::export_plugin!(plugin);
