//! The `agent-mode` plugin: the agent works in one of a configured set of modes (by default
//! `plan` and `execute`). Each mode's workflow goes into the system prompt; a mode may forbid
//! mutating tools, and that is enforced in `pre-tool-use`, not only asked for (see `gate`).
//!
//! The model reads and switches the mode with `mode_get` / `mode_set`; the operator with
//! `/mode [NAME]`; front ends show it through `status` and a view (a choice of the modes that
//! switches with `/mode`). The model's switch out of a mode it may not leave on its own (by
//! default every mode that forbids mutating tools; `model_may_leave` per mode) asks the
//! operator, and a reply that switches out of a read-only mode cannot also change things. An
//! operator switch is announced to the model once, on the next model call. Every switch emits
//! `mode-changed` with `{from, to, by}`, displayed as `mode → NAME` unless the operator made
//! it: their `/mode` answers with the switch, so a switch reads as one line.
//!
//! State (namespace `agent-mode`): `mode` (JSON string; absent until the first switch, which
//! means the default mode), `default_mode` (the configured default, seeded by `configure` into
//! every new session, for plugins that read the mode from here), `pending_notice`,
//! `left_read_only`.

mod config;
mod current;
mod gate;
mod modes;
mod tools;
mod view;

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

use agent_host_sdk::prelude::*;

use config::Config;
use current::Switcher;

/// The plugin's declaration.
pub fn plugin() -> Plugin<Config> {
    Plugin::new(gate::PLUGIN, env!("CARGO_PKG_VERSION"))
        .configure(config::configure)
        .tool(tools::get())
        .tool(tools::set())
        .provide(provide)
        .on_pre_tool_use(pre_tool_use)
        .status(|ctx| current::effective(&ctx.config).ok().map(|mode| mode.name.clone()))
        .command(Command::new(
            "mode",
            "/mode [NAME]",
            "Shows the current mode, or switches to NAME",
            mode_command,
        ))
        .view_from_state(view::view)
}

fn provide(ctx: &Context<Config>, contribution: Contribution) -> Contribution {
    match contribution_for(&ctx.config, contribution) {
        Ok(contribution) => contribution,
        Err(error) => {
            log::error(&format!("cannot read the current mode: {error}"));
            Contribution::default()
        }
    }
}

fn pre_tool_use(ctx: &Context<Config>, call: &ToolUse) -> PreToolOutcome {
    match gate::decide(&ctx.config, ctx.model_calls, call) {
        Ok(decision) => PreToolOutcome { decision, ..PreToolOutcome::default() },
        // Fails closed: a mode whose state cannot be read does not let changes through.
        Err(error) => PreToolOutcome {
            decision: Some(Decision::Deny(format!("agent-mode cannot read the current mode: {error}"))),
            ..PreToolOutcome::default()
        },
    }
}

fn mode_command(ctx: &Context<Config>, wanted: &str) -> Result<String, String> {
    let config = &ctx.config;
    let current = current::stored(config)?;
    if wanted.is_empty() {
        return Ok(format!("mode: {current}"));
    }
    if config.mode(wanted).is_none() {
        return Err(format!("unknown mode `{wanted}`; the modes are {}", config.names()));
    }
    if current::switch(&current, wanted, Switcher::Operator)? {
        current::note_operator_switch(&current, wanted)?;
        // The operator chose the mode: nothing of the model's own switch is left to hold.
        current::forget_left_read_only();
        // The view's `mode` choice shows the switch on every front end; saying it here too
        // would say it twice.
        Ok(String::new())
    } else {
        Ok(format!("mode: already {wanted}"))
    }
}

/// Instructions for the current mode, plus a one-time notice of a switch the model did not
/// make itself (an operator switch, or a fallback after the mode set changed).
fn contribution_for(config: &Config, contribution: Contribution) -> Result<Contribution, String> {
    current::publish_default(config)?;
    let stored = current::stored(config)?;
    let mut notices = Vec::new();
    let current = if config.mode(&stored).is_some() {
        stored
    } else {
        let fallback = config.default_mode.clone();
        current::switch(&stored, &fallback, Switcher::Host)?;
        // The fallback message supersedes any pending operator notice about the lost mode.
        current::take_notice()?;
        notices.push(current::fallback_message(&stored, &fallback));
        fallback
    };
    if let Some(notice) = current::take_notice()? {
        notices.push(current::switch_message(&notice));
    }
    let mut contribution = contribution.instructions(config.instructions(&current));
    for notice in notices {
        contribution = contribution.inject(notice);
    }
    // Depends on the config and the stored mode and notice only; a call that takes a notice
    // or writes the default has effects and is not reused, so an outside switch is still
    // announced exactly once and every session gets its `default_mode`.
    Ok(contribution.reusable())
}

agent_host_sdk::export_plugin!(plugin);
