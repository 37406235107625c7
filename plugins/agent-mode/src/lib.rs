//! The `agent-mode` plugin: the agent works in one of a configured set of modes (by default
//! `plan` and `execute`). Each mode's workflow goes into the system prompt; a mode may forbid
//! mutating tools, and that is enforced in `pre-tool-use`, not only asked for (see `gate`).
//!
//! The model reads and switches the mode with `mode_get` / `mode_set`; the operator with
//! `/mode [NAME]`. The model's switch out of a mode it may not leave on its own (by default
//! every mode that forbids mutating tools; `model_may_leave` per mode) asks the operator, and
//! a reply that switches out of a read-only mode cannot also change things. An operator
//! switch is announced to the model once, on the next model call. Every switch emits
//! `mode-changed` with `{from, to, by}`.
//!
//! State (namespace `agent-mode`): `mode` (JSON string), `pending_notice`, `left_read_only`.

mod config;
mod current;
mod gate;
mod modes;
mod tools;

use agent_host_sdk::prelude::*;

use config::Config;
use current::Switcher;

#[derive(Default)]
struct AgentMode;

impl Plugin for AgentMode {
    fn manifest(&self) -> Manifest {
        Manifest::new(gate::PLUGIN, env!("CARGO_PKG_VERSION"))
            .with(Capabilities::PROVIDE | Capabilities::CALL_TOOL | Capabilities::PRE_TOOL_USE)
            .command("mode", "/mode [NAME]", "Shows the current mode, or switches to NAME")
    }

    fn configure(&self, config: Value) -> Result<Value, String> {
        // The mode's rules are about tools that change things (and `mode_set` while it counts
        // as one, see `tools`); the others need no call.
        hook_filter::only(ToolHook::PreToolUse, &ToolFilter::mutating_only());
        config::configure(config)
    }

    fn provide(&self, ctx: &Context) -> Contribution {
        let config: Config = match ctx.config() {
            Ok(config) => config,
            Err(error) => {
                log::error(&error);
                return Contribution::default();
            }
        };
        match contribution(&config) {
            Ok(contribution) => contribution,
            Err(error) => {
                log::error(&format!("cannot read the current mode: {error}"));
                Contribution::default()
            }
        }
    }

    fn call_tool(&self, ctx: &Context, call: ToolCall) -> Result<String, String> {
        tools::call(&ctx.config()?, ctx, &call)
    }

    fn pre_tool_use(&self, ctx: &Context, call: &ToolUse) -> PreToolOutcome {
        let decision = ctx.config::<Config>().and_then(|config| gate::decide(&config, ctx, call));
        match decision {
            Ok(decision) => PreToolOutcome { decision, ..PreToolOutcome::default() },
            // Fails closed: a mode whose state cannot be read does not let changes through.
            Err(error) => PreToolOutcome {
                decision: Some(Decision::Deny(format!("agent-mode cannot read the current mode: {error}"))),
                ..PreToolOutcome::default()
            },
        }
    }

    fn command(&self, ctx: &Context, name: &str, args: &str) -> Result<String, String> {
        if name != "mode" {
            return Err(format!("the agent-mode plugin has no command named `/{name}`"));
        }
        let config: Config = ctx.config()?;
        let current = current::stored(&config)?;
        let wanted = args.trim();
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
            Ok(format!("mode: {current} -> {wanted}"))
        } else {
            Ok(format!("mode: already {wanted}"))
        }
    }
}

/// Instructions and tools for the current mode, plus a one-time notice of a switch the model
/// did not make itself (an operator switch, or a fallback after the mode set changed).
fn contribution(config: &Config) -> Result<Contribution, String> {
    let stored = current::stored(config)?;
    // Write the default down on the first call, so the console badge (and any plugin reading
    // `mode` through a grant) sees the mode without knowing this plugin's default.
    current::remember_default(&stored)?;
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
    let mut contribution = Contribution::default().instructions(config.instructions(&current));
    let mode = config.mode(&current).ok_or_else(|| format!("the mode `{current}` is not configured"))?;
    for spec in tools::specs(config, mode) {
        contribution = contribution.tool(spec);
    }
    for notice in notices {
        contribution = contribution.inject(notice);
    }
    // Depends on the config and the stored mode and notice only; a call that takes a notice
    // or writes the default has effects and is not reused, so an outside switch is still
    // announced exactly once.
    Ok(contribution.reusable())
}

export_plugin!(AgentMode);
