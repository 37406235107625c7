//! The `agent-mode` plugin: the agent works in one of a configured set of modes (by default
//! `plan` and `execute`). Each mode's workflow goes into the system prompt; a mode may forbid
//! mutating tools, and that is enforced in `pre-tool-use`, not only asked for.
//!
//! The model reads and switches the mode with `mode_get` / `mode_set`; the operator with
//! `/mode [NAME]`. An operator switch is announced to the model once, on the next model call.
//! Every switch emits `mode-changed` with `{from, to, by}`.
//!
//! State (namespace `agent-mode`): `mode` (JSON string), `pending_notice`.

mod config;
mod current;
mod modes;
mod tools;

use agent_host_sdk::prelude::*;

use config::Config;
use current::Switcher;

#[derive(Default)]
struct AgentMode;

impl Plugin for AgentMode {
    fn manifest(&self) -> Manifest {
        Manifest::new("agent-mode", env!("CARGO_PKG_VERSION"))
            .with(Capabilities::PROVIDE | Capabilities::CALL_TOOL | Capabilities::PRE_TOOL_USE)
            .command("mode", "/mode [NAME]", "Shows the current mode, or switches to NAME")
    }

    fn configure(&self, config: Value) -> Result<Value, String> {
        // The mode's only rule is about tools that change things; the others need no call.
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
        tools::call(&ctx.config()?, &call)
    }

    fn pre_tool_use(&self, ctx: &Context, call: &ToolUse) -> PreToolOutcome {
        let Ok(config) = ctx.config::<Config>() else { return PreToolOutcome::default() };
        if !call.mutates {
            return PreToolOutcome::default();
        }
        let current = current::stored(&config).unwrap_or_else(|_| config.default_mode.clone());
        // An unknown stored mode is repaired by the next `provide`; until then the default rules.
        let mode = config.mode(&current).or_else(|| config.mode(&config.default_mode));
        match mode {
            Some(mode) if !mode.allow_mutating => PreToolOutcome {
                decision: Some(Decision::Deny(format!(
                    "`{}` changes things, and the current mode `{}` allows only tools that do not. \
                     Keep to read-only tools and finish this mode's workflow; ask the user to approve \
                     a switch to a mode that allows changes if this step needs one.",
                    call.call.name, mode.name
                ))),
                ..PreToolOutcome::default()
            },
            _ => PreToolOutcome::default(),
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
    for spec in tools::specs(config) {
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
