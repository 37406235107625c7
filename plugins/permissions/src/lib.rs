//! Permissions: decides every tool call from rules and a preset, cuts oversized results,
//! and (when asked) keeps an audit log of every call: when it is decided and when it ends.
//!
//! Rules: `{ tool, args? = { path?, command? }, decision, reason? }`. All matching rules
//! count and the strictest wins (deny, then ask, then allow). Shell lines are read with a
//! real shell grammar (see `shell`): an allow rule vouches only for a line made wholly of
//! literal simple commands, each matched by an allow rule, as is everything they run or
//! write in turn (`find -exec`, `sed w`); a deny or ask rule sees every
//! command the line may run however it is written (quoted, behind wrappers, inside `$(…)`,
//! `sh -c`, `eval`, `find -exec`), and counts a program known only at run time as a match.
//! Path rules match the path as the fs plugin reads it (`workspace-path`), and reach the
//! files a walk or a symlink would touch through the fs tools' `exclude` argument. What no
//! rule matches falls to `default`, or to the preset. Deny rules are best effort: the
//! sandbox around processes, not this reading, is the boundary.

mod audit;
mod config;
mod glob;
mod rules;
mod shell;
mod walk;

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

use agent_host_sdk::prelude::*;

use config::{Config, Preset, Verdict};
use rules::{Call, Fallback};

/// State key holding the preset chosen with `/permissions PRESET` for this session.
const PRESET_KEY: &str = "preset";

/// The session's preset (from `/permissions`), or the configured one.
fn session_preset(config: &Config) -> (Preset, bool) {
    match state::get::<Preset>(PRESET_KEY) {
        Ok(Some(preset)) => (preset, true),
        _ => (config.preset, false),
    }
}

/// A session preset replaces the configured `default` too: the operator chose a policy.
fn fallback(config: &Config) -> Fallback {
    match session_preset(config) {
        (preset, true) => Fallback::Preset(preset),
        (preset, false) => config.default.map_or(Fallback::Preset(preset), Fallback::Fixed),
    }
}

/// The plugin's declaration.
pub fn plugin() -> Plugin<Config> {
    Plugin::new("permissions", env!("CARGO_PKG_VERSION"))
        .configure(configure)
        .provide(provide)
        .on_pre_tool_use(pre_tool_use)
        .on_post_tool_use(post_tool_use)
        .command(Command::new(
            "permissions",
            "/permissions [PRESET]",
            "Shows or switches the permission preset",
            permissions_command,
        ))
}

/// Checks the table and tells the host which calls the hooks need to see. No setting reads
/// another plugin's state or runs processes, so nothing is required of the host.
fn configure(config: &mut Config) -> Result<Vec<Requirement>, String> {
    config.check()?;
    // Calls of tools an unconditional allow rule covers come out `allow` whatever else
    // holds, so the host need not ask about them.
    // fs tools are asked about whenever path rules may need to rewrite them, and
    // every call is when each decision goes to the audit log.
    let guards_paths = config
        .rules
        .iter()
        .any(|r| r.decision != Verdict::Allow && r.args.as_ref().is_some_and(|a| a.path.is_some()));
    let mut allowed = rules::always_allowed(&config.rules);
    if guards_paths {
        allowed.retain(|tool| !walk::fs_tools().any(|fs_tool| glob::glob_match(tool, fs_tool)));
    }
    if config.audit {
        allowed.clear();
    }
    if !allowed.is_empty() {
        hook_filter::only(ToolHook::PreToolUse, &ToolFilter::any().except_tools(allowed));
    }
    // `post-tool-use` audits every call, or cuts long results, or has nothing to do.
    match (config.audit, config.max_result_bytes) {
        (true, _) => {}
        (false, Some(limit)) => {
            let limit = u32::try_from(limit).unwrap_or(u32::MAX);
            hook_filter::only(ToolHook::PostToolUse, &ToolFilter::any().output_longer_than(limit));
        }
        (false, None) => hook_filter::never(ToolHook::PostToolUse),
    }
    Ok(Vec::new())
}

fn provide(ctx: &Context<Config>, contribution: Contribution) -> Contribution {
    let (preset, _) = session_preset(&ctx.config);
    let text = match preset {
        Preset::Trust => "!!! PERMISSIONS: TRUST MODE — every tool call runs without asking, including \
                          ones that change files or run commands. Double-check before you act. !!!"
            .to_owned(),
        other => format!(
            "Some tool calls need the operator's approval or are refused (preset: {}). \
             When a call is refused, read the reason and choose another way; do not retry it unchanged.",
            other.name()
        ),
    };
    contribution.instructions(text).reusable()
}

fn pre_tool_use(ctx: &Context<Config>, use_: &ToolUse) -> PreToolOutcome {
    let config = &ctx.config;
    let arguments: Value = serde_json::from_str(&use_.call.arguments).unwrap_or(Value::Null);
    let call =
        Call { tool: &use_.call.name, plugin: &use_.plugin, mutates: use_.mutates, arguments: &arguments };
    let outcome = rules::decide(&call, &config.rules, fallback(config));
    if config.audit
        && let Err(error) = audit::decided(ctx, use_, outcome.verdict, &outcome.reason)
    {
        log::warn(&format!("audit log write failed: {error}"));
    }
    let guarded = walk::guarded_paths(&call, &config.rules);
    let updated_arguments = walk::with_exclusions(&arguments, &guarded);
    // A walk says what it left out, so the model knows the listing is not the whole.
    let context = updated_arguments
        .as_ref()
        .filter(|_| walk::WALKING_TOOLS.contains(&call.tool))
        .map(|_| format!("[permissions: left out by path rules: {}]", guarded.join(", ")));
    let decision = match outcome.verdict {
        Verdict::Allow => Decision::Allow,
        Verdict::Ask => Decision::Ask(outcome.reason),
        Verdict::Deny => Decision::Deny(format!("refused by permissions: {}", outcome.reason)),
    };
    PreToolOutcome { decision: Some(decision), updated_arguments, context }
}

fn post_tool_use(ctx: &Context<Config>, use_: &ToolUse, result: &ToolResult) -> PostToolOutcome {
    if ctx.config.audit
        && let Err(error) = audit::finished(ctx, use_, result)
    {
        log::warn(&format!("audit log write failed: {error}"));
    }
    let replace = ctx
        .config
        .max_result_bytes
        .and_then(|limit| cut(&result.output, limit))
        .map(|output| ToolResult { ok: result.ok, output });
    PostToolOutcome { replace }
}

fn permissions_command(ctx: &Context<Config>, args: &str) -> Result<String, String> {
    let config = &ctx.config;
    if args.is_empty() {
        let (preset, chosen) = session_preset(config);
        let source = if chosen { "chosen for this session" } else { "from config" };
        return Ok(format!(
            "permission preset: {} ({source}); {} rule(s). Presets: {}",
            preset.name(),
            config.rules.len(),
            Preset::NAMES
        ));
    }
    let preset = Preset::parse(args)?;
    state::set(PRESET_KEY, &preset)?;
    events::emit("permissions-changed", &json!({ "preset": preset.name() }), None);
    Ok(format!("permission preset is now {} for this session", preset.name()))
}

/// The output cut to at most `limit` bytes (on a character boundary) plus a note, or None
/// when it fits.
fn cut(output: &str, limit: usize) -> Option<String> {
    if output.len() <= limit {
        return None;
    }
    let mut end = limit;
    while !output.is_char_boundary(end) {
        end -= 1;
    }
    let removed = output.len() - end;
    Some(format!(
        "{}\n[permissions: result cut to {end} of {} bytes; {removed} bytes removed]",
        &output[..end],
        output.len()
    ))
}

agent_host_sdk::export_plugin!(plugin);
