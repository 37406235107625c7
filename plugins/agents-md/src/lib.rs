//! The `agents-md` plugin: the workspace's AGENTS.md files (the instructions file Codex,
//! OpenCode, Gemini CLI and Claude Code read) offered as instructions in the system prompt,
//! when the operator trusts the workspace.
//!
//! ```toml
//! [plugin.config]
//! workspace = "/workspace"   # the workspace folder, as [plugin.grants.dirs] maps it
//! trust_project = false      # nothing is read until this is true
//! max_kb = 32                # the most text of the files offered, all together
//! max_depth = 8              # how many folders below the workspace are walked
//! ```
//!
//! **Which files.** The workspace's own AGENTS.md and those in the folders below it, down to
//! `max_depth` folders. The walk skips hidden folders (`.git` among them), `node_modules` and
//! `target`, and never enters a folder through a symbolic link. An AGENTS.md that is a link is
//! followed while it stays in the workspace (`AGENTS.md -> CLAUDE.md`); one that leads out is
//! not. A file that cannot be used (a link out, not UTF-8 text, unreadable, a folder) is
//! reported by path and why, as an `agents_md_skipped` event and a warning, and skipped; the
//! others are still offered. Untrusted (the default), nothing is read, and the log says so
//! once a session.
//!
//! **Order and form.** The convention: a file applies to the files under its folder, and the
//! nearer one takes precedence there. So the root's AGENTS.md comes first, then each nested
//! one by depth, then by path; each under a heading that names its folder and says it applies
//! to the files under it, taking precedence there over the ones above it. They are offered in
//! that order until `max_kb` is spent: the file that reaches the cap is cut at its last whole
//! line that fits and says it is cut, and the files after it are named as left out.
//!
//! **When they are read.** At the start of every turn (the `user-prompt-submit` hook), and by
//! `/agents-md`, which also lists what is offered. The reading is kept in the session's state
//! and `provide` builds the instructions from it, declaring them reusable: they then depend on
//! that state alone, and the host rebuilds them only when a reading differs. Reading the files
//! in `provide` instead would break reuse's promise (a contribution that depends on files is
//! not reusable) and walk the workspace before every model call; reading them only once a
//! session would go stale when a file is edited between turns. So an AGENTS.md edited during a
//! turn is offered as edited from the next turn on.
//!
//! **Child agents** (contract 0.2.8) run the same deployment's plugins, so a child gets its
//! parent's instructions with no configuration of its own.
//!
//! The plugin reads only the workspace folder granted to it, read-only being enough:
//! `"/workspace" = { host = "..." }` under `[plugin.grants.dirs]`.

mod config;
mod confine;
mod kept;
mod listing;
mod prompt;
mod read;
mod scan;
mod walk;

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

use agent_host_sdk::prelude::*;

use config::Config;

/// The plugin's declaration.
pub fn plugin() -> Plugin<Config> {
    Plugin::new("agents-md", env!("CARGO_PKG_VERSION"))
        .configure(config::configure)
        .on_session_start(session_start)
        .on_user_prompt(user_prompt)
        .provide(provide)
        .command(Command::new(
            "agents-md",
            "/agents-md",
            "Reads the workspace's AGENTS.md files anew and lists those offered",
            agents_md_command,
        ))
}

/// Says once a session, when untrusted, that nothing is read; a trusted workspace is read by
/// the turn's prompt hook, which follows.
fn session_start(ctx: &Context<Config>) -> Option<String> {
    if !ctx.config.trust_project {
        log::info(&untrusted(&ctx.config));
    }
    None
}

/// Reads the files anew before each turn: one may have changed since the last.
fn user_prompt(ctx: &Context<Config>, _prompt: &str) -> PromptOutcome {
    if ctx.config.trust_project
        && let Err(error) = kept::refresh(&ctx.config)
    {
        log::error(&format!("the AGENTS.md files cannot be kept: {error}"));
    }
    PromptOutcome { block: None, context: None }
}

/// The instructions, from the reading kept.
fn provide(ctx: &Context<Config>, contribution: Contribution) -> Contribution {
    if !ctx.config.trust_project {
        // It depends on the configuration alone.
        return contribution.reusable();
    }
    let kept = kept::kept();
    let reusable = matches!(kept, Ok(Some(_)));
    // Loaded in the middle of a turn, the plugin has no reading yet: read now, once; the
    // next call reads it from state.
    let scan = match kept {
        Ok(Some(scan)) => Ok(scan),
        Ok(None) | Err(_) => kept::refresh(&ctx.config),
    };
    let contribution = match scan {
        Ok(scan) => match prompt::text(&scan, ctx.config.max_kb) {
            Some(text) => contribution.instructions(text),
            None => contribution,
        },
        Err(error) => {
            log::error(&format!("the AGENTS.md files cannot be offered: {error}"));
            return contribution;
        }
    };
    // It depends only on the state read above and the configuration.
    if reusable { contribution.reusable() } else { contribution }
}

/// `/agents-md`: reads the files anew (an edit made during a turn) and lists them.
fn agents_md_command(ctx: &Context<Config>, _args: &str) -> Result<String, String> {
    if !ctx.config.trust_project {
        return Ok(untrusted(&ctx.config));
    }
    let scan = kept::refresh(&ctx.config)?;
    Ok(listing::plain(&scan, ctx.config.max_kb))
}

fn untrusted(config: &Config) -> String {
    format!(
        "AGENTS.md files under {} are not read: `trust_project` is false (set it to true to offer them)",
        config.workspace
    )
}

agent_host_sdk::export_plugin!(plugin);
