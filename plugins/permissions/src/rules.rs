//! Decides one tool call: matching rules first (deny beats ask beats allow), then the
//! fallback. Pure: no host calls, so the logic is easy to read and to test.

use serde_json::Value;

use crate::config::{Preset, Rule, Verdict};
use crate::glob::{glob_match, is_glob};
use crate::shell_split::{Part, split_command};
use crate::shell_words::{Runs, what_runs};

/// How deep scripts inside scripts (`sh -c "bash -c '...'"`) are opened for deny rules.
const MAX_SCRIPT_DEPTH: usize = 4;

/// What the decision is about.
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
    let parts = command.map(split_command).unwrap_or_default();
    let seen = deny_forms(&parts);
    // Allow rules with a command pattern vouch for a command line only together: every part
    // must be matched by one of them.
    let mut command_allows: Vec<&Rule> = Vec::new();
    for rule in rules.iter().filter(|r| tool_matches(r, call) && path_matches(r, call)) {
        let reason = rule.reason.clone().unwrap_or_else(|| format!("rule for `{}`", rule.tool));
        match rule.args.as_ref().and_then(|a| a.command.as_deref()) {
            None => consider(rule.decision, reason),
            Some(_) if command.is_none() => {}
            Some(_) if rule.decision == Verdict::Allow => command_allows.push(rule),
            // Deny and ask rules fire when any part matches, as written or as it runs.
            Some(pattern) => {
                if seen.iter().any(|form| command_part_matches(pattern, form)) {
                    consider(rule.decision, reason);
                }
            }
        }
    }
    if !command_allows.is_empty()
        && !parts.is_empty()
        && parts.iter().all(|part| allowed_part(part, &command_allows))
    {
        consider(Verdict::Allow, "every part of the command is allowed by a rule".into());
    }
    best.unwrap_or_else(|| fallback.decide(call))
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
                (verdict, format!("`{}` changes things and the preset is {}", call.tool, preset.name()))
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

fn tool_matches(rule: &Rule, call: &Call) -> bool {
    match rule.tool.strip_prefix("plugin:") {
        Some(plugin) => glob_match(plugin, call.plugin),
        None => glob_match(&rule.tool, call.tool),
    }
}

/// A rule with a path pattern matches only calls whose `path` argument matches it.
fn path_matches(rule: &Rule, call: &Call) -> bool {
    match rule.args.as_ref().and_then(|a| a.path.as_deref()) {
        None => true,
        Some(pattern) => {
            call.arguments.get("path").and_then(Value::as_str).is_some_and(|p| glob_match(pattern, p))
        }
    }
}

/// Every form of every part a deny or ask rule must see: the part as written, and what it
/// runs (unquoted, unwrapped; a script given to a shell split and opened in turn).
fn deny_forms(parts: &[Part]) -> Vec<String> {
    let mut forms = Vec::new();
    let mut pending: Vec<(String, usize)> = parts.iter().map(|part| (part.text.clone(), 0)).collect();
    while let Some((text, depth)) = pending.pop() {
        match what_runs(&text) {
            Runs::Command(line) => forms.push(line),
            Runs::Script(script) if depth < MAX_SCRIPT_DEPTH => {
                pending.extend(split_command(&script).into_iter().map(|part| (part.text, depth + 1)));
            }
            Runs::Script(script) => forms.push(script),
        }
        forms.push(text);
    }
    forms
}

fn allowed_part(part: &Part, allows: &[&Rule]) -> bool {
    !part.opaque
        && allows.iter().any(|rule| {
            rule.args
                .as_ref()
                .and_then(|a| a.command.as_deref())
                .is_some_and(|p| command_part_matches(p, &part.text))
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
