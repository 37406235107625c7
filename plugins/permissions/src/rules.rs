//! Decides one tool call: matching rules first (deny beats ask beats allow), then the
//! fallback. Pure: no host calls, so the logic is easy to read and to test.

use serde_json::Value;

use crate::config::{Preset, Rule, Verdict};
use crate::glob::{glob_match, glob_prefix_match, is_glob};
use crate::shell;

/// What the decision is about.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub tool: &'a str,
    pub plugin: &'a str,
    pub mutates: bool,
    pub arguments: &'a Value,
}

/// The verdict and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub verdict: Verdict,
    pub reason: String,
}

/// Tools the `accept-edits` preset allows without asking.
const FILE_EDIT_TOOLS: &[&str] = &["write_file", "edit_file"];

/// Decides `call` under `rules`; `fallback` covers what no rule matches.
pub fn decide(call: &Call, rules: &[Rule], fallback: Fallback) -> Outcome {
    let mut best: Option<Outcome> = None;
    let mut consider = |verdict: Verdict, reason: String| {
        if best.as_ref().is_none_or(|b| verdict > b.verdict) {
            best = Some(Outcome { verdict, reason });
        }
    };
    let command = call.arguments.get("command").and_then(Value::as_str);
    // The line is read only when some rule looks at commands.
    let any_command_rule = rules.iter().any(|r| r.args.as_ref().is_some_and(|a| a.command.is_some()));
    let reading = command.filter(|_| any_command_rule).map(shell::read).unwrap_or_default();
    // Allow rules with a command pattern vouch for a command line only together: every
    // simple command of a fully read line must be matched by one of them.
    let mut command_allows: Vec<&Rule> = Vec::new();
    for rule in rules.iter().filter(|r| tool_matches(r, call) && path_matches(r, call)) {
        let reason = rule.reason.clone().unwrap_or_else(|| format!("rule for `{}`", rule.tool));
        match rule.args.as_ref().and_then(|a| a.command.as_deref()) {
            None => consider(rule.decision, reason),
            Some(_) if command.is_none() => {}
            Some(_) if rule.decision == Verdict::Allow => command_allows.push(rule),
            // Deny and ask rules fire when any command the line may run matches, and when
            // a command is only known at run time.
            Some(pattern) => {
                let line = command.unwrap_or_default();
                if let Some(run) = reading.runs.iter().find(|run| !run.dynamic && command_runs(pattern, run))
                {
                    let shown = if run.written == line.trim() {
                        String::new()
                    } else {
                        format!(" (`{line}` runs `{}`)", run.written)
                    };
                    consider(rule.decision, format!("{reason}{shown}"));
                } else if let Some(run) = reading.runs.iter().find(|run| run.dynamic) {
                    consider(
                        rule.decision,
                        format!(
                            "{reason} (`{}`: what it runs is only known when it runs, so the rule counts as matching)",
                            run.text
                        ),
                    );
                }
            }
        }
    }
    // And every command the line runs in turn (behind wrappers, `find -exec`, `sed e`) or
    // file it writes through an argument (`sed w`, `find -fprint`) must be allowed too.
    if let Some(parts) = &reading.allowable
        && !command_allows.is_empty()
        && parts.iter().all(|part| allowed_part(part, &command_allows))
        && reading.runs.iter().all(|run| allowed_run(run, &command_allows))
    {
        consider(Verdict::Allow, "every part of the command is allowed by a rule".into());
    }
    best.unwrap_or_else(|| fallback.decide(call))
}

/// Whether a deny or ask pattern matches a command the line may run, by its program's
/// name or as written; an open-ended command (`xargs rm`) matches when some arguments
/// added at run time would make it match.
fn command_runs(pattern: &str, run: &shell::Command) -> bool {
    [&run.text, &run.written].into_iter().any(|text| {
        command_part_matches(pattern, text) || (run.open_ended && could_match_with_more(pattern, text))
    })
}

/// Whether `text` followed by more arguments could match `pattern`.
fn could_match_with_more(pattern: &str, text: &str) -> bool {
    let pattern = pattern.trim();
    if is_glob(pattern) {
        return glob_prefix_match(pattern, &format!("{text} "));
    }
    pattern.strip_prefix(text).is_some_and(|rest| rest.starts_with(char::is_whitespace))
}

/// The tool patterns whose every call `rules` allow, whatever the arguments, the session's
/// preset or the default: named by an allow rule with no argument patterns, and by no ask or
/// deny rule that could match the same tool. `pre-tool-use` need not be asked about them.
pub fn always_allowed(rules: &[Rule]) -> Vec<String> {
    let unconditional =
        |rule: &Rule| rule.args.as_ref().is_none_or(|a| a.path.is_none() && a.command.is_none());
    rules
        .iter()
        .filter(|rule| rule.decision == Verdict::Allow && unconditional(rule) && !names_an_owner(&rule.tool))
        .filter(|allow| {
            !rules
                .iter()
                .any(|other| other.decision != Verdict::Allow && may_overlap(&allow.tool, &other.tool))
        })
        .map(|rule| rule.tool.clone())
        .collect()
}

/// Whether one tool name could match both patterns: exact when either is a plain name;
/// two globs are assumed to overlap, and a `plugin:` or `mcp:` rule to cover any tool.
fn may_overlap(a: &str, b: &str) -> bool {
    if names_an_owner(b) {
        return true;
    }
    match (is_glob(a), is_glob(b)) {
        (_, false) => glob_match(a, b),
        (false, true) => glob_match(b, a),
        (true, true) => true,
    }
}

/// What decides calls no rule matches.
#[derive(Debug, Clone, Copy)]
pub enum Fallback {
    Preset(Preset),
    Fixed(Verdict),
}

impl Fallback {
    fn decide(self, call: &Call) -> Outcome {
        let (verdict, reason) = match self {
            Fallback::Fixed(verdict) => (verdict, "the configured default decision".to_owned()),
            Fallback::Preset(preset) => {
                let verdict = preset_verdict(preset, call);
                let what = if call.mutates { "changes things" } else { "changes nothing" };
                (verdict, format!("`{}` {what} and the preset is {}", call.tool, preset.name()))
            }
        };
        Outcome { verdict, reason }
    }
}

fn preset_verdict(preset: Preset, call: &Call) -> Verdict {
    if !call.mutates {
        return Verdict::Allow;
    }
    match preset {
        Preset::ReadOnly => Verdict::Deny,
        Preset::AskToMutate => Verdict::Ask,
        Preset::AcceptEdits if FILE_EDIT_TOOLS.contains(&call.tool) => Verdict::Allow,
        Preset::AcceptEdits => Verdict::Ask,
        Preset::Trust => Verdict::Allow,
    }
}

/// Whether a rule's `tool` names who runs the tools rather than the tools: `plugin:NAME`,
/// or `mcp:SERVER` for every tool of an MCP server.
fn names_an_owner(tool: &str) -> bool {
    tool.starts_with("plugin:") || tool.starts_with("mcp:")
}

pub fn tool_matches(rule: &Rule, call: &Call) -> bool {
    if let Some(plugin) = rule.tool.strip_prefix("plugin:") {
        return glob_match(plugin, call.plugin);
    }
    // The host names an MCP server's calls' owner `mcp:<server>`, a name no plugin can have.
    if let Some(server) = rule.tool.strip_prefix("mcp:") {
        return call.plugin.strip_prefix("mcp:").is_some_and(|owner| glob_match(server, owner));
    }
    glob_match(&rule.tool, call.tool)
}

/// A rule with a path pattern matches only calls whose `path` argument matches it, both
/// read as the fs plugin reads paths (`./.env`, `/workspace/.env` and ` .env` are `.env`).
/// A path fs would refuse (`a/../.env`) counts as a match for deny and ask rules and for no
/// allow rule.
fn path_matches(rule: &Rule, call: &Call) -> bool {
    let Some(pattern) = rule.args.as_ref().and_then(|a| a.path.as_deref()) else { return true };
    let Some(path) = call.arguments.get("path").and_then(Value::as_str) else { return false };
    match workspace_path::normalize(path) {
        Ok(path) => workspace_path::rule_matches(pattern, &path),
        Err(_) => rule.decision != Verdict::Allow,
    }
}

/// Whether allow rules cover `run` both by its program's name and as written; one that
/// gets more arguments at run time (`xargs grep`) only when any continuation is covered.
fn allowed_run(run: &shell::Command, allows: &[&Rule]) -> bool {
    !run.dynamic
        && [&run.text, &run.written].into_iter().all(|text| {
            allows.iter().any(|rule| {
                rule.args.as_ref().and_then(|a| a.command.as_deref()).is_some_and(|pattern| {
                    let pattern = pattern.trim();
                    command_part_matches(pattern, text)
                        && (!run.open_ended || !is_glob(pattern) || pattern.ends_with('*'))
                })
            })
        })
}

fn allowed_part(part: &str, allows: &[&Rule]) -> bool {
    allows.iter().any(|rule| {
        rule.args.as_ref().and_then(|a| a.command.as_deref()).is_some_and(|p| command_part_matches(p, part))
    })
}

/// A glob matches the whole part; a plain pattern is a prefix ending at a word boundary,
/// so `git status` matches `git status -s` but not `git statusx`.
pub fn command_part_matches(pattern: &str, part: &str) -> bool {
    let pattern = pattern.trim();
    if is_glob(pattern) {
        return glob_match(pattern, part);
    }
    part == pattern || part.strip_prefix(pattern).is_some_and(|rest| rest.starts_with(char::is_whitespace))
}
