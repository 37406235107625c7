//! `[[mcp]]`: the MCP servers whose tools a deployment offers beside its plugins' tools.
//!
//! A server is either a program the host starts and speaks to over stdio (`command`), or a
//! streamable HTTP endpoint (`url`). Secrets never stand in the file: `env` names the host
//! variables a started server gets, and each header names the variable holding its value.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::load::is_variable_name;
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
    pub tools: McpToolFilter,
    /// Globs over the server's own tool names that the operator vouches only read: offered
    /// in plan mode and run without an ask under ask-to-mutate, whatever the server says.
    #[serde(default)]
    pub read_only: Vec<String>,
    /// Whether the server's own `readOnlyHint` may mark a tool read-only. Unset: yes for a
    /// started server (the operator chose its code), no for one reached at a `url` (its
    /// code is someone else's to change; list its reading tools in `read_only`).
    #[serde(default)]
    pub trust_hints: Option<bool>,
    /// Values a client handed over with a server it asked for (an editor's `mcpServers`),
    /// never read from a file: there `env` and `headers` name host variables instead.
    #[serde(skip)]
    pub given: GivenValues,
}

/// Environment variables and headers given as values, by a client that asked for the server
/// for its session alone. Their values are secrets as often as not: `Debug` shows names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct GivenValues {
    pub env: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for GivenValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names =
            |pairs: &[(String, String)]| pairs.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>();
        f.debug_struct("GivenValues")
            .field("env", &names(&self.env))
            .field("headers", &names(&self.headers))
            .finish()
    }
}

/// Globs over a server's own tool names (`read_*`): only those `allow` matches, when it is
/// given, and none that `deny` matches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpToolFilter {
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    #[serde(default)]
    pub deny: Vec<String>,
}

impl McpToolFilter {
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

    /// Whether the server's tool `tool`, whose `readOnlyHint` is `hint`, only reads: the
    /// operator's `read_only` says so, or the hint does where hints are trusted.
    pub fn reads_only(&self, tool: &str, hint: Option<bool>) -> bool {
        let trusted = self.trust_hints.unwrap_or(self.transport() == McpTransport::Stdio);
        self.read_only.iter().any(|glob| wildmatch::WildMatch::new(glob).matches(tool))
            || (trusted && hint == Some(true))
    }
}

/// Why `name` cannot name a server, if it cannot.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Some(format!("`{name}` must be letters, digits, `_` and `-`"));
    }
    name.contains("__").then(|| {
        format!("`{name}` must not hold `__`: it separates the server from the tool in `mcp__{name}__<tool>`")
    })
}

/// Why `header` cannot be set on a server's requests, if it cannot.
pub fn header_problem(header: &str) -> Option<String> {
    if reqwest::header::HeaderName::from_bytes(header.as_bytes()).is_err() {
        return Some(format!("`{header}` is not a header name"));
    }
    RESERVED_HEADERS
        .iter()
        .any(|reserved| reserved.eq_ignore_ascii_case(header))
        .then(|| format!("`{header}` is the transport's own header; it cannot be set"))
}

/// What serde cannot check of the `[[mcp]]` entries.
pub(super) fn check(config: &Config) -> Result<(), ConfigError> {
    // The value's line, else its entry's.
    let error = |field: String, message: String| {
        let entry = field.rsplit_once('.').map_or(&field[..], |(entry, _)| entry).to_owned();
        config.error_near(field, &entry, message)
    };
    for (index, server) in config.mcp.iter().enumerate() {
        let at = |key: &str| format!("mcp[{index}].{key}");
        let name = &server.name;
        if let Some(problem) = name_problem(name) {
            return Err(error(at("name"), problem));
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
        check_paths(config, server).map_err(|(key, message)| error(at(&key), message))?;
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
            if let Some(problem) = header_problem(header) {
                return Err(error(at(&format!("headers.{header}")), problem));
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

/// Refuses a started server whose working folder, or a path among its arguments, holds
/// the host's own files or sits inside a folder of them — the same check as a plugin's
/// granted folders (`grants.rs`): a filesystem server rooted at the deployment folder
/// would hand the model the config, every session's history and the compile cache's key.
/// The key of the offending field and why.
fn check_paths(config: &Config, server: &McpServerConfig) -> Result<(), (String, String)> {
    if server.command.is_none() {
        return Ok(());
    }
    let sensitive = super::grants::sensitive_paths(config);
    let name = &server.name;
    let cwd = config.resolve(server.cwd.as_deref().unwrap_or(std::path::Path::new(".")));
    let finding = |path: &std::path::Path| {
        let path = super::grants::real_path(path);
        sensitive
            .iter()
            .find_map(|item| super::grants::overlap(&path, item))
            .map(|(found, relation)| format!("{} {relation} {}", path.display(), found.what))
    };
    if server.cwd.is_some()
        && let Some(found) = finding(&cwd)
    {
        return Err((
            "cwd".to_owned(),
            format!(
                "server `{name}` may not start in {found}; give it a folder that holds none of the \
                 host's own files"
            ),
        ));
    }
    for (position, arg) in server.args.iter().enumerate() {
        if let Some(path) = path_argument(arg, &cwd)
            && let Some(found) = finding(&path)
        {
            return Err((
                format!("args[{position}]"),
                format!(
                    "server `{name}` may not be handed `{arg}`: {found}; name a folder that holds \
                     none of the host's own files (a workspace) instead"
                ),
            ));
        }
    }
    Ok(())
}

/// The path `arg` names, resolved against the server's working folder `cwd`, if it reads as
/// one: `.`, `..`, a path starting with `/`, `./`, `../` or `~/`, the value of a
/// `--option=PATH`, or a name that exists in `cwd`. A package name (`@scope/server`) or a
/// flag is not.
fn path_argument(arg: &str, cwd: &std::path::Path) -> Option<PathBuf> {
    let value = match arg.split_once('=') {
        Some((option, value)) if option.starts_with('-') => value,
        _ if arg.starts_with('-') => return None,
        _ => arg,
    };
    if value.is_empty() {
        return None;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let path = match (value.strip_prefix("~/").or((value == "~").then_some("")), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => cwd.join(value),
    };
    let spelled_as_path = value == "."
        || value == ".."
        || value == "~"
        || ["/", "./", "../", "~/"].iter().any(|start| value.starts_with(start));
    (spelled_as_path || path.exists()).then_some(path)
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

    #[test]
    fn a_started_server_handed_the_deployment_folder_is_refused_naming_the_argument() {
        let (line, field, message) = where_and_what(
            "[[mcp]]\nname = \"files\"\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]\n",
        );
        assert_eq!((line, field.as_deref()), (Some(4), Some("mcp[0].args[2]")));
        assert!(message.contains("server `files` may not be handed `.`"), "{message}");
        assert!(message.contains("the config file"), "{message}");
        for arg in [
            "/tmp/agent-host-test",
            "--root=/tmp",
            "../agent-host-test/.agent-host/sessions.db",
            "/tmp/agent-host-test/.agent-host/cache/x",
        ] {
            let (_, field, message) =
                where_and_what(&format!("[[mcp]]\nname = \"f\"\ncommand = \"srv\"\nargs = [\"{arg}\"]\n"));
            assert_eq!(field.as_deref(), Some("mcp[0].args[0]"), "{arg}: {message}");
        }
        let (_, field, message) =
            where_and_what("[[mcp]]\nname = \"f\"\ncommand = \"srv\"\ncwd = \"work\"\nargs = [\"..\"]\n");
        assert_eq!(field.as_deref(), Some("mcp[0].args[0]"), "resolved from its cwd: {message}");
        let (_, field, message) = where_and_what("[[mcp]]\nname = \"f\"\ncommand = \"srv\"\ncwd = \".\"\n");
        assert_eq!(field.as_deref(), Some("mcp[0].cwd"));
        assert!(message.contains("may not start in"), "{message}");
    }

    #[test]
    fn a_workspace_folder_package_names_and_flags_are_fine() {
        let text = "[[mcp]]\nname = \"files\"\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"workspace\", \"./notes\", \"--verbose\"]\ncwd = \"work\"\n";
        Config::parse(text, Path::new("/tmp/agent-host-test/config.toml")).unwrap();
        let url = "[[mcp]]\nname = \"remote\"\nurl = \"https://h/mcp\"\n";
        Config::parse(url, Path::new("/tmp/agent-host-test/config.toml")).unwrap();
    }

    #[test]
    fn the_shipped_example_loads_and_roots_its_server_in_a_workspace() {
        let shipped =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../config.toml")).unwrap();
        let start = shipped.find("# [[mcp]]").expect("config.toml shows an [[mcp]] example");
        let example: String = shipped[start..]
            .lines()
            .take_while(|line| line.starts_with("# "))
            .map(|line| format!("{}\n", &line[2..]))
            .collect();
        let config = Config::parse(&example, Path::new("/tmp/agent-host-test/config.toml")).unwrap();
        let server = &config.mcp[0];
        assert!(!server.args.iter().any(|arg| arg == "."), "{:?}", server.args);
    }

    #[test]
    fn a_url_servers_hints_are_not_trusted_unless_asked_and_the_operators_list_decides() {
        let parse = |text: &str| Config::parse(text, Path::new("/tmp/agent-host-test/config.toml")).unwrap();
        let remote = parse("[[mcp]]\nname = \"r\"\nurl = \"https://h/mcp\"\nread_only = [\"get_*\"]\n");
        let remote = &remote.mcp[0];
        assert!(!remote.reads_only("delete_all", Some(true)), "a remote server's hint alone decides nothing");
        assert!(remote.reads_only("get_file", None), "the operator's list does");
        let trusting = parse("[[mcp]]\nname = \"r\"\nurl = \"https://h/mcp\"\ntrust_hints = true\n");
        assert!(trusting.mcp[0].reads_only("list", Some(true)));
        let started = parse("[[mcp]]\nname = \"s\"\ncommand = \"srv\"\n");
        assert!(started.mcp[0].reads_only("list", Some(true)) && !started.mcp[0].reads_only("list", None));
        let distrusted = parse("[[mcp]]\nname = \"s\"\ncommand = \"srv\"\ntrust_hints = false\n");
        assert!(!distrusted.mcp[0].reads_only("list", Some(true)));
    }
}
