//! Operator commands (built-in ones such as `/plugins`, and those plugins declare) and direct
//! tool calls: work on a session without a model call.

use super::export_file;
use crate::agent::report::{forward_events, heard, report_failure};
use crate::agent::tool_call::{self, ToolCallEnv};
use crate::agent::turn::compact::{CompactOutcome, Compactor};
use crate::agent::turn::prepare::prepare_call;
use crate::agent::{Host, LiveSession, NoOperator, TurnError};
use crate::compacted_history::Reason;
use crate::events::{Event, EventSink, TokenUsage, thousands};
use crate::model::tokens::{ContextAccount, TokenBudget};
use crate::plugins::{CallContext, Exports};
use crate::state::{EstimatedUsage, document};
use crate::tools::ToolCall;
use crate::tools::ToolResult;

/// The host's own commands; any other name is a plugin's (or unknown).
pub const BUILT_IN_COMMANDS: &[&str] =
    &["help", "plugins", "mcp", "reload", "session", "approvals", "export", "compact"];

/// A command line's name (without the slash) and its arguments.
/// Whether a line is a command rather than a message for the model: it starts with `/`, and
/// `//` escapes one (a message that starts with a slash).
pub fn is_command(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with('/') && !line.starts_with("//")
}

pub fn split_command(line: &str) -> (&str, &str) {
    let line = line.trim();
    let line = line.strip_prefix('/').unwrap_or(line);
    let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    (name, args.trim())
}

/// [`Host::command`]'s work.
pub(in crate::agent) async fn command(
    host: &Host,
    session: &mut LiveSession,
    line: &str,
    sink: &dyn EventSink,
) -> Result<String, String> {
    let (name, args) = split_command(line);
    let set = host.plugins();
    let ctx = host.call_context(session);
    let answer = match name {
        "help" => Ok(help(host)),
        "plugins" => Ok(host.plugin_table()),
        "mcp" => Ok(match host.mcp_table() {
            table if table.is_empty() => "no MCP servers (add [[mcp]] entries to the config)".to_owned(),
            table => table,
        }),
        "reload" => match host.reload(sink).await {
            Ok(()) => Ok(format!("reloaded\n{}", host.plugin_table())),
            Err(error) => Err(format!("reload rejected, the current plugins keep serving: {error:#}")),
        },
        // The model's URL as `describe` prints it: without userinfo or query.
        "session" => Ok(format!(
            "session {}\nmodel {}\nmodel calls {}; tokens {}\ncontext {}",
            session.id(),
            host.model().describe(),
            session.model_calls(),
            tokens_used(session.usage(), EstimatedUsage::of(session.bag())),
            context_line(session.context(), host.budget())
        )),
        "approvals" => crate::agent::StandingApprovals::command(session.bag(), args),
        "export" => export(host, session, args),
        "compact" => compact_now(host, session, &ctx, sink).await,
        _ => {
            let Some(plugin) = set.plugins().iter().find(|p| p.commands().iter().any(|c| c.name == name))
            else {
                return Err(format!("unknown command `/{name}`; try /help"));
            };
            match plugin.command(&ctx, session.bag(), name, args).await {
                Ok(output) => {
                    forward_events(sink, plugin, output.events);
                    output.value
                }
                Err(error) => {
                    report_failure(sink, &error);
                    Err(error.to_string())
                }
            }
        }
    };
    // The command may have changed a plugin's state, or (`/reload`) the plugins themselves.
    session
        .end_step(&host.plugins(), &ctx, sink, &**host.sessions().store())
        .await
        .map_err(|error| format!("the command ran but its result could not be saved: {error}"))?;
    answer
}

/// [`Host::queued_turn`]'s work.
pub(in crate::agent) async fn queued_turn(
    host: &Host,
    session: &mut LiveSession,
    sink: &dyn EventSink,
) -> Option<String> {
    let set = host.plugins();
    let ctx = host.call_context(session);
    let mut queued = None;
    for plugin in set.plugins().iter().filter(|p| p.implements(Exports::QUEUED)) {
        let prompt = heard(sink, plugin, plugin.queued(&ctx, session.bag()).await).flatten();
        if let Some(prompt) = prompt.filter(|prompt| !prompt.trim().is_empty()) {
            sink.emit(&Event::TurnQueued { plugin: plugin.name().to_owned(), prompt: prompt.clone() });
            queued = Some(prompt);
            break;
        }
    }
    if let Err(error) = session.end_step(&set, &ctx, sink, &**host.sessions().store()).await {
        sink.emit(&Event::Error {
            message: format!("a queued turn could not be saved: {error}"),
            plugin: None,
        });
        return None;
    }
    queued
}

fn help(host: &Host) -> String {
    let mut lines = vec![
        "/help              this list".to_owned(),
        "/plugins           the loaded plugins: version, file, hash, when loaded, calls made, last error"
            .to_owned(),
        "/mcp               the MCP servers: state, tools, start-up time, calls, restarts, last error"
            .to_owned(),
        "/reload            read config.toml and the plugins again now".to_owned(),
        "/session           this session's id, the model it talks to, the tokens it has used".to_owned(),
        "/approvals         the standing \"always\" approvals, numbered: tool, scope, when".to_owned(),
        "/approvals revoke N|all  withdraw one standing approval, or all of them".to_owned(),
        "/export [--force] FILE  write this session (history, state, compaction view) to a new FILE as \
         JSON (--force replaces one); --import FILE starts a copy of it"
            .to_owned(),
        "/compact           compact the history sent to the model now (the store keeps every message)"
            .to_owned(),
        "/quit              leave (the session is saved; resume with --session ID)".to_owned(),
    ];
    for plugin in host.plugins().plugins() {
        for command in plugin.commands() {
            lines.push(format!("{:<18} {} ({})", command.usage, command.description, plugin.name()));
        }
    }
    lines.join("\n")
}

/// `/compact`: a compaction now, whatever the trigger says.
/// Its plugins' model calls are reported, and the session committed, as the command ends.
async fn compact_now(
    host: &Host,
    session: &mut LiveSession,
    ctx: &CallContext,
    sink: &dyn EventSink,
) -> Result<String, String> {
    let snapshot = host.snapshot();
    let store = host.sessions().store().clone();
    let compactor = Compactor { snapshot: &snapshot, tokens: host.budget(), ctx, store: &*store, sink };
    // Before any model call the fixed part is not known; the history alone is weighed.
    let beside = session.context().beside_history().unwrap_or_default();
    let outcome = compactor.run(session, Reason::Requested, beside).await;
    match outcome.map_err(|error| format!("the compaction could not be saved: {error}"))? {
        CompactOutcome::Compacted(done) => Ok(format!(
            "compacted by {}: {} ({} → {} tokens of history; the store keeps every message)",
            done.strategy,
            done.note,
            thousands(u64::from(done.tokens_before)),
            thousands(u64::from(done.tokens_after))
        )),
        CompactOutcome::Vetoed { plugin, reason } => Err(format!("{plugin} vetoed the compaction: {reason}")),
        CompactOutcome::Unchanged(why) => Ok(format!("nothing compacted: {why}")),
    }
}

/// `/export [--force] FILE`: the session as committed, as a session document
/// (`state::document`), written to a file of the operator's that is none of the host's own.
fn export(host: &Host, session: &mut LiveSession, args: &str) -> Result<String, String> {
    let (force, path) = match args.strip_prefix("--force") {
        Some(rest) if rest.is_empty() || rest.starts_with(char::is_whitespace) => (true, rest.trim()),
        _ => (false, args),
    };
    if path.is_empty() {
        return Err("usage: /export [--force] FILE".to_owned());
    }
    let target = std::path::Path::new(path);
    let refused = |why: String| format!("/export refused: {path} {why}");
    if let Some(what) = crate::config::host_file_at(&host.config(), target) {
        return Err(refused(format!("is {what}")));
    }
    let store = host.sessions().store();
    // What is exported is what the store has: everything so far, committed first.
    session
        .commit(&**store)
        .map_err(|error| format!("the session could not be saved to export it: {error}"))?;
    let stored = store
        .load(session.id())
        .map_err(|error| format!("cannot read the session back to export it: {error}"))?
        .ok_or_else(|| format!("session {} is not in the store", session.id()))?;
    let text = document::export(&stored).map_err(|error| error.to_string())?;
    export_file::write(target, text.as_bytes(), force).map_err(|error| match error {
        export_file::Refusal::Link => refused("is a symbolic link, which an export does not follow".into()),
        export_file::Refusal::Exists => refused(format!("exists; `/export --force {path}` replaces it")),
        export_file::Refusal::Io(error) => format!("cannot write {path}: {error}"),
    })?;
    Ok(format!(
        "session {} written to {path} ({} messages); --import {path} starts a copy of it",
        session.id(),
        stored.history.len()
    ))
}

/// [`Host::plugin_table`]'s work.
pub(in crate::agent) fn plugin_table(host: &Host) -> String {
    let set = host.plugins();
    let status = host.reload_status();
    let mut lines: Vec<String> = set
        .with_grants()
        .map(|(p, grants)| {
            let identity = p.identity();
            let granted = grants.names();
            format!(
                "{:<24} {}  sha256:{}  loaded {}{}; calls: {}{}",
                p.label(),
                identity.path.display(),
                &identity.hash[..12],
                crate::human_time::since(p.loaded_at()),
                if p.cache_hit() { ", from the compile cache" } else { "" },
                p.calls().summary(),
                if granted.is_empty() { String::new() } else { format!("; granted: {}", granted.join(", ")) }
            )
        })
        .collect();
    if lines.is_empty() {
        lines.push("no plugins loaded".to_owned());
    }
    if let Some(error) = status.error {
        lines.push(format!("last reload error: {error}"));
    }
    lines.extend(status.restart);
    lines.join("\n")
}

/// [`Host::powers_granted`]'s work.
pub(in crate::agent) fn powers_granted(host: &Host) -> Vec<String> {
    let set = host.plugins();
    set.plugins()
        .iter()
        .flat_map(|plugin| {
            crate::plugins::powers::held(|export| plugin.implements(export))
                .map(|power| format!("{} may {} (granted `{}`)", plugin.label(), power.what, power.grant))
        })
        .collect()
}

/// [`Host::invoke_tool`]'s work.
pub(in crate::agent) async fn invoke_tool(
    host: &Host,
    session: &mut LiveSession,
    name: &str,
    arguments: &serde_json::Value,
    sink: &dyn EventSink,
) -> Result<ToolResult, TurnError> {
    let snapshot = host.snapshot();
    let ctx = host.call_context(session);
    let mut prepared = prepare_call(&snapshot, &ctx, session, sink).await?;
    session.bring_views(std::mem::take(&mut prepared.fresh_views));
    let env = ToolCallEnv {
        snapshot: &snapshot,
        prepared: &prepared,
        ctx: &ctx,
        bag: session.bag(),
        memo: session.provide_memo(),
        sink,
        approver: &NoOperator,
        child: None,
    };
    let request = ToolCall { id: "direct".into(), name: name.to_owned(), arguments: arguments.to_string() };
    let report = tool_call::run(&env, &request).await;
    session.bring_views(report.fresh_views);
    session.end_step(&snapshot.plugins, &ctx, sink, &**host.sessions().store()).await?;
    Ok(report.result)
}

/// A session's token totals for `/session`: as reported, then what the host estimated for
/// the calls whose endpoint reported nothing.
fn tokens_used(usage: TokenUsage, estimated: EstimatedUsage) -> String {
    let reported = if usage == TokenUsage::default() {
        "none reported by the endpoint".to_owned()
    } else {
        usage.summary()
    };
    if estimated.calls == 0 {
        return reported;
    }
    format!(
        "{reported}; estimated for {} calls that reported none: in {} · out {}",
        thousands(estimated.calls),
        thousands(estimated.input_tokens),
        thousands(estimated.output_tokens)
    )
}

/// How full the window is, for `/session`: the tokens the last call took (as the endpoint
/// counted them, else as estimated) of the window, and how the last request was estimated.
fn context_line(account: &ContextAccount, budget: &TokenBudget) -> String {
    let window = budget.window.map_or_else(
        || "a window the host does not know (set [model] context_window)".to_owned(),
        |window| format!("a window of {} tokens", thousands(window.into())),
    );
    let used = match account.in_use() {
        Some(in_use) if in_use.reported => format!("{} tokens in use of {window}", thousands(in_use.tokens)),
        Some(in_use) => format!("~{} tokens in use (estimated) of {window}", thousands(in_use.tokens)),
        None => format!("nothing sent yet; {window}"),
    };
    match account.last() {
        Some(last) => format!(
            "{used}; the last request was estimated at ~{} tokens and {} kept for the reply (counted by {})",
            thousands(last.prompt_tokens),
            thousands(last.output_reserve),
            last.counted_by.name()
        ),
        None => used,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{History, Message};
    use crate::model::ModelRequest;
    use crate::model::tokens::Counter;

    #[test]
    fn the_context_line_says_what_is_known_of_the_window() {
        let budget = TokenBudget { counter: Counter::Bytes, window: Some(8_000), output_reserve: 100 };
        let mut account = ContextAccount::default();
        assert_eq!(context_line(&account, &budget), "nothing sent yet; a window of 8,000 tokens");
        let history = History::from(vec![Message::user("x".repeat(4_000))]);
        let request = ModelRequest::of_history("s", &history);
        let estimate = account.estimate(&budget, &request, None);
        let line = context_line(&account, &TokenBudget { window: None, ..budget });
        assert!(
            line.starts_with(&format!(
                "~{} tokens in use (estimated) of a window the host does not know",
                thousands(estimate.prompt_tokens)
            )),
            "{line}"
        );
        assert!(line.ends_with("and 100 kept for the reply (counted by bytes)"), "{line}");
    }
}
