//! The plugin's configuration: a preset, an optional fallback decision, rules, a result
//! size cap and the audit switch.

use serde::{Deserialize, Serialize};

/// A named starting policy for what no rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Deny every mutating tool.
    ReadOnly,
    /// Ask before every mutating tool.
    #[default]
    AskToMutate,
    /// Allow file edits, ask before other mutating tools.
    AcceptEdits,
    /// Allow everything.
    Trust,
}

impl Preset {
    /// Every preset, for error messages and `/permissions`.
    pub const NAMES: &'static str = "read-only, ask-to-mutate, accept-edits, trust";

    /// Parses a preset name as the operator types it.
    pub fn parse(name: &str) -> Result<Preset, String> {
        serde_json::from_value(serde_json::Value::String(name.trim().to_owned()))
            .map_err(|_| format!("unknown preset `{}`; choose one of {}", name.trim(), Self::NAMES))
    }

    /// The preset's name.
    pub fn name(self) -> &'static str {
        match self {
            Preset::ReadOnly => "read-only",
            Preset::AskToMutate => "ask-to-mutate",
            Preset::AcceptEdits => "accept-edits",
            Preset::Trust => "trust",
        }
    }
}

/// A rule's verdict. Ordered by severity: deny beats ask beats allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

/// Argument patterns a rule may add to its tool pattern.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgPatterns {
    /// A glob for the `path` argument, matched against the path as the fs plugin reads it
    /// (`./x`, `/workspace/x` and ` x` are all `x`); deny and ask path rules also keep the
    /// fs tools' walks and symlinks away from what they match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A prefix (or glob, with `*`/`?`) for each simple command of the `command` argument:
    /// an allow rule for each command of a wholly literal line, a deny or ask rule for any
    /// command the line may run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// One rule of `rules = [...]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// A tool name or glob (`fs_*`, `mcp__github__*`), `plugin:NAME` for every tool of a
    /// plugin, or `mcp:SERVER` for every tool of an MCP server.
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<ArgPatterns>,
    pub decision: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The normalized configuration.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub preset: Preset,
    /// The decision for calls no rule matches; when absent the preset decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Verdict>,
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Results longer than this many bytes are cut in post-tool-use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_result_bytes: Option<usize>,
    /// Append one JSON line per tool call to `/audit/audit.jsonl`.
    #[serde(default)]
    pub audit: bool,
}

impl Config {
    /// Checks what the types cannot say; the types already name an unknown or ill-typed
    /// field by its path (`rules[0].decision`).
    pub fn check(&self) -> Result<(), String> {
        for (index, rule) in self.rules.iter().enumerate() {
            if rule.tool.trim().is_empty() {
                return Err(format!("`rules[{index}].tool` is empty"));
            }
        }
        if self.max_result_bytes == Some(0) {
            return Err("`max_result_bytes` must be at least 1".into());
        }
        Ok(())
    }
}
