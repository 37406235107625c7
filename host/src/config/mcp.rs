//! `[[mcp]]`: the MCP servers whose tools a deployment offers beside its plugins' tools.
//!
//! A server is either a program the host starts and speaks to over stdio (`command`), or a
//! streamable HTTP endpoint (`url`). Secrets never stand in the file: `env` names the host
//! variables a started server gets, and each header names the variable holding its value.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::load::{is_variable_name, line_of_field};
use super::{Config, ConfigError};

/// One `[[mcp]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// What the server is called: its tools are offered as `mcp__<name>__<tool>`.
    pub name: String,
    /// The program to start (stdio), found on `PATH` when it holds no `/`.
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Host variables the started server gets, by name (their values are read at start).
    /// Nothing else of the host's environment reaches it but a few harmless basics
    /// (`PATH`, `HOME`, the locale: [`BASELINE_ENV`]).
    #[serde(default)]
    pub env: Vec<String>,
    /// The started server's working folder, relative to the config file's; the config
    /// file's folder when unset.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// A streamable HTTP endpoint, in place of `command`.
    #[serde(default)]
    pub url: Option<String>,
    /// Request headers for `url`: header name to the NAME of the variable holding its value.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// How long one tool call may take, in milliseconds.
    #[serde(default = "call_timeout_ms")]
    pub timeout_ms: u64,
    /// How long the server may take to start and list its tools, in milliseconds.
    #[serde(default = "startup_timeout_ms")]
    pub startup_timeout_ms: u64,
    /// Which of the server's tools are offered.
    #[serde(default)]
    pub tools: ToolFilter,
}

/// Globs over a server's own tool names (`read_*`): only those `allow` matches, when it is
/// given, and none that `deny` matches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolFilter {
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    #[serde(default)]
    pub deny: Vec<String>,
}

impl ToolFilter {
    pub fn offers(&self, tool: &str) -> bool {
        let matches = |glob: &String| wildmatch::WildMatch::new(glob).matches(tool);
        self.allow.as_ref().is_none_or(|allow| allow.iter().any(matches)) && !self.deny.iter().any(matches)
    }
}

/// Host variables every started server gets when the host has them: what programs need to
/// run at all (find other programs, a home folder, the locale), none of them a secret.
pub const BASELINE_ENV: &[&str] =
    &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TZ"];

/// Headers the streamable HTTP transport sets itself.
const RESERVED_HEADERS: &[&str] =
    &["Accept", "Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id"];

fn enabled() -> bool {
    true
}

fn call_timeout_ms() -> u64 {
    60_000
}

fn startup_timeout_ms() -> u64 {
    30_000
}

/// How a server is reached, as its entry says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpTransport {
    Stdio,
    Http,
}

impl McpTransport {
    pub fn as_str(self) -> &'static str {
        match self {
            McpTransport::Stdio => "stdio",
            McpTransport::Http => "http",
        }
    }
}

impl McpServerConfig {
    pub fn transport(&self) -> McpTransport {
        if self.url.is_some() { McpTransport::Http } else { McpTransport::Stdio }
    }
}

/// What serde cannot check of the `[[mcp]]` entries.
pub(super) fn check(config: &Config) -> Result<(), ConfigError> {
    let error = |field: String, message: String| ConfigError {
        file: config.source.file.clone(),
        line: line_of_field(&config.source.text, &field).or_else(|| {
            line_of_field(&config.source.text, field.rsplit_once('.').map_or(&field[..], |(entry, _)| entry))
        }),
        field: Some(field),
        message,
    };
    for (index, server) in config.mcp.iter().enumerate() {
        let at = |key: &str| format!("mcp[{index}].{key}");
        let name = &server.name;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(error(at("name"), format!("`{name}` must be letters, digits, `_` and `-`")));
        }
        if name.contains("__") {
            return Err(error(
                at("name"),
                format!(
                    "`{name}` must not hold `__`: it separates the server from the tool in `mcp__{name}__<tool>`"
                ),
            ));
        }
        if let Some(first) = config.mcp[..index].iter().position(|other| &other.name == name) {
            return Err(error(at("name"), format!("`{name}` names mcp[{first}] already")));
        }
        match (&server.command, &server.url) {
            (Some(_), Some(_)) => {
                return Err(error(
                    at("url"),
                    "give either `command` (stdio) or `url` (streamable HTTP), not both".into(),
                ));
            }
            (None, None) => {
                return Err(error(
                    at("name"),
                    format!(
                        "server `{name}` needs `command` (a program to start) or `url` (a streamable HTTP endpoint)"
                    ),
                ));
            }
            (Some(command), None) if command.trim().is_empty() => {
                return Err(error(at("command"), "is empty".into()));
            }
            (None, Some(url)) => {
                let parsed: Result<hyper::Uri, _> = url.parse();
                let fine = parsed.as_ref().is_ok_and(|uri| {
                    matches!(uri.scheme_str(), Some("http" | "https")) && uri.host().is_some()
                });
                if !fine {
                    return Err(error(at("url"), format!("`{url}` is not an http:// or https:// URL")));
                }
            }
            _ => {}
        }
        if server.url.is_some() {
            for key in ["args", "env", "cwd"] {
                let set = match key {
                    "args" => !server.args.is_empty(),
                    "env" => !server.env.is_empty(),
                    _ => server.cwd.is_some(),
                };
                if set {
                    return Err(error(
                        at(key),
                        format!("is for a started server (`command`); `{name}` is reached at its `url`"),
                    ));
                }
            }
        } else if !server.headers.is_empty() {
            return Err(error(
                at("headers"),
                format!("are for a server reached at a `url`; `{name}` is started"),
            ));
        }
        // The entry is not repeated: a value pasted here in place of a name must not reach a log.
        if !server.env.iter().all(|variable| is_variable_name(variable)) {
            return Err(error(
                at("env"),
                "lists the NAMES of host variables the server gets (letters, digits and `_`), not values"
                    .into(),
            ));
        }
        for (header, variable) in &server.headers {
            if reqwest::header::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return Err(error(at("headers"), format!("`{header}` is not a header name")));
            }
            if RESERVED_HEADERS.iter().any(|reserved| reserved.eq_ignore_ascii_case(header)) {
                return Err(error(
                    at(&format!("headers.{header}")),
                    format!("`{header}` is the transport's own header; it cannot be set"),
                ));
            }
            if !is_variable_name(variable) {
                return Err(error(
                    at(&format!("headers.{header}")),
                    "must be the NAME of the variable that holds the header's value, not the value".into(),
                ));
            }
        }
        for (key, value) in
            [("timeout_ms", server.timeout_ms), ("startup_timeout_ms", server.startup_timeout_ms)]
        {
            if value == 0 {
                return Err(error(at(key), "must be at least 1 (milliseconds)".into()));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn error(entries: &str) -> ConfigError {
        Config::parse(entries, Path::new("/tmp/agent-host-test/config.toml")).unwrap_err()
    }

    fn where_and_what(entries: &str) -> (Option<usize>, Option<String>, String) {
        let error = error(entries);
        (error.line, error.field, error.message)
    }

    #[test]
    fn a_server_is_either_started_or_reached_and_says_which_is_missing() {
        let (line, field, message) =
            where_and_what("[[mcp]]\nname = \"a\"\ncommand = \"x\"\nurl = \"http://h/mcp\"\n");
        assert_eq!((line, field.as_deref()), (Some(4), Some("mcp[0].url")));
        assert!(message.contains("not both"), "{message}");
        let (line, _, message) = where_and_what("[agent]\n\n[[mcp]]\nname = \"lonely\"\n");
        assert_eq!(line, Some(4));
        assert!(message.contains("`lonely` needs `command`") && message.contains("or `url`"), "{message}");
    }

    #[test]
    fn names_are_checked_unique_and_free_of_the_separator() {
        let (line, _, message) = where_and_what("[[mcp]]\nname = \"a__b\"\ncommand = \"x\"\n");
        assert_eq!(line, Some(2));
        assert!(message.contains("must not hold `__`"), "{message}");
        let twice = "[[mcp]]\nname = \"a\"\ncommand = \"x\"\n[[mcp]]\nname = \"a\"\ncommand = \"y\"\n";
        let (line, field, message) = where_and_what(twice);
        assert_eq!((line, field.as_deref()), (Some(5), Some("mcp[1].name")));
        assert!(message.contains("names mcp[0] already"), "{message}");
        assert!(where_and_what("[[mcp]]\nname = \"a b\"\ncommand = \"x\"\n").2.contains("letters, digits"));
    }

    #[test]
    fn a_value_where_a_variable_name_belongs_is_refused_and_not_repeated() {
        let pasted = "sk-live-0123456789abcdef";
        let refused = error(&format!("[[mcp]]\nname = \"a\"\ncommand = \"x\"\nenv = [\"{pasted}\"]\n"));
        assert_eq!(refused.field.as_deref(), Some("mcp[0].env"));
        assert!(!refused.to_string().contains(pasted), "{refused}");
        let error = error(&format!(
            "[[mcp]]\nname = \"a\"\nurl = \"https://h/mcp\"\nheaders = {{ Authorization = \"Bearer {pasted}\" }}\n"
        ));
        assert_eq!(error.field.as_deref(), Some("mcp[0].headers.Authorization"));
        assert!(!error.to_string().contains(pasted), "{error}");
    }

    #[test]
    fn settings_of_the_other_transport_and_bad_values_are_named() {
        let (_, field, _) =
            where_and_what("[[mcp]]\nname = \"a\"\nurl = \"https://h/mcp\"\nargs = [\"-v\"]\n");
        assert_eq!(field.as_deref(), Some("mcp[0].args"));
        let (_, field, _) =
            where_and_what("[[mcp]]\nname = \"a\"\ncommand = \"x\"\nheaders = { A = \"B\" }\n");
        assert_eq!(field.as_deref(), Some("mcp[0].headers"));
        let (_, field, message) =
            where_and_what("[[mcp]]\nname = \"a\"\nurl = \"https://h/mcp\"\nheaders = { accept = \"V\" }\n");
        assert_eq!(field.as_deref(), Some("mcp[0].headers.accept"));
        assert!(message.contains("the transport's own header"), "{message}");
        let (_, field, message) = where_and_what("[[mcp]]\nname = \"a\"\nurl = \"ftp://h/mcp\"\n");
        assert_eq!(field.as_deref(), Some("mcp[0].url"));
        assert!(message.contains("not an http:// or https:// URL"), "{message}");
        let (line, field, _) = where_and_what("[[mcp]]\nname = \"a\"\ncommand = \"x\"\ntimeout_ms = 0\n");
        assert_eq!((line, field.as_deref()), (Some(4), Some("mcp[0].timeout_ms")));
        let (line, _, message) = where_and_what("[[mcp]]\nname = \"a\"\ncommand = \"x\"\ntimeout = 5\n");
        assert_eq!(line, Some(4));
        assert!(message.contains("unknown field `timeout`"), "{message}");
    }

    #[test]
    fn a_good_entry_loads_with_its_defaults() {
        let text =
            "[[mcp]]\nname = \"files\"\ncommand = \"npx\"\nargs = [\"-y\", \"pkg\"]\nenv = [\"TOKEN\"]\n";
        let config = Config::parse(text, Path::new("/tmp/agent-host-test/config.toml")).unwrap();
        let server = &config.mcp[0];
        assert_eq!((server.enabled, server.timeout_ms, server.startup_timeout_ms), (true, 60_000, 30_000));
        assert_eq!(server.transport(), McpTransport::Stdio);
        assert!(server.tools.offers("anything"));
    }
}
