//! The `skills` plugin: Agent Skills (agentskills.io). A skill is a folder holding a SKILL.md,
//! YAML frontmatter (`name`, `description`, ...) then instructions, and optionally `scripts/`,
//! `references/` and `assets/`. The plugin finds the skills once per session, lists each by
//! name and description in the system prompt, and gives the model three tools: `load_skill`
//! (the instructions and the skill's files), `read_skill_resource` (one file, confined to the
//! skill's folder) and `run_skill_script` (a file under `scripts/`, through the `process`
//! grant). A SKILL.md that breaks a rule of the specification is reported, by path and rule,
//! and skipped; the others still load. A loaded skill's result is pinned against compaction
//! through the `pre-compact` hook.
//!
//! ```toml
//! [plugin.config]
//! user_dirs = ["/user-skills"]        # the operator's skills, as [plugin.grants.dirs] maps them
//! project_dirs = [".agents/skills"]   # the project's, relative to the workspace ...
//! trust_project = false               # ... used only when trusted
//! max_file_kb = 64                    # read_skill_resource's cap on one file
//! catalog_kb = 8                      # the catalog's share of the system prompt
//! script_timeout_ms = 30000
//! script_output_kb = 64
//! ```
//!
//! The plugin reads only the folders granted to it (`[plugin.grants.dirs]`); running scripts
//! needs `process = true` and a writable folder to run them in.

mod catalog;
mod config;
mod confine;
mod files;
mod listing;
mod loaded;
mod prompt;
mod rules;
mod scan;
mod script;
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
    Plugin::new("skills", env!("CARGO_PKG_VERSION"))
        .configure(config::configure)
        .on_session_start(folder_catalog::session_start::<Catalog>)
        .provide(folder_catalog::provide::<Catalog>)
        .tool(Tool::new(
            "load_skill",
            "Loads a skill by name: its instructions, to follow for the task at hand, and the list of its files.",
            tools::load_skill,
        ))
        .tool(Tool::new(
            "read_skill_resource",
            "Reads one text file of a skill (such as references/forms.md), by its path inside the skill's folder.",
            tools::read_skill_resource,
        ))
        .tool(
            Tool::new(
                "run_skill_script",
                "Runs a script from a skill's scripts/ folder with the given arguments, in the sandbox, with \
                 the workspace as its working folder, and returns its exit status, stdout and stderr. The \
                 deployment must let the skills plugin run processes.",
                script::run_skill_script,
            )
            .mutating(),
        )
        .command(Command::new("skills", "/skills", "Lists the skills, finding them anew", skills_command))
        .on_pre_compact(loaded::pin)
        .view(view)
}

/// `/skills`: finds the skills anew (a skill added or fixed since the session started) and
/// lists them.
fn skills_command(ctx: &Context<Config>, _args: &str) -> Result<String, String> {
    let catalog = Catalog::rescan(&ctx.config)?;
    Ok(listing::plain(&catalog, &loaded::all()?))
}

/// The skills found and which are loaded, as one text widget.
fn view(_ctx: &Context<Config>) -> Vec<Widget> {
    let text = match (Catalog::kept(), loaded::all()) {
        (Ok(Some(catalog)), Ok(loaded)) => listing::markdown(&catalog, &loaded),
        // Not found yet: the session has not started.
        (Ok(None), _) => return Vec::new(),
        (Err(error), _) | (_, Err(error)) => format!("The skills cannot be read: {error}"),
    };
    vec![Text::new("skills", "Skills", &text).into()]
}

agent_host_sdk::export_plugin!(plugin);
