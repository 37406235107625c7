//! `[serve]`: who may use `agent-host serve` and within what bounds.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::load::is_variable_name;
use super::{Config, ConfigError};

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// Where to listen when `--listen` is not given.
    pub listen: String,
    /// Principal name to the NAME of the variable holding its bearer token.
    pub tokens: BTreeMap<String, String>,
    /// Principals that may see every session and reload the deployment.
    pub admins: Vec<String>,
    /// How long an `ask` waits for an answer over HTTP before `agent.on_ask` decides.
    pub approval_timeout_secs: u64,
    /// Turns one principal may have running at once; one more is `429`.
    pub max_turns_per_principal: usize,
    /// Sessions one principal may keep in the store; creating one more is `429`.
    pub max_sessions_per_principal: usize,
    /// The plugins' commands (names without the slash; `"*"`: all of them) every principal
    /// may run over HTTP. The rest are for admins: a plugin's command may change what the
    /// operator set for everyone (a permission preset), and the host cannot tell which do.
    pub plugin_commands: Vec<String>,
    /// Events each session keeps for clients that reconnect with `Last-Event-ID`.
    pub event_buffer: usize,
    /// What those kept events may weigh, in KiB: past it the oldest go first.
    pub event_buffer_kb: usize,
    /// The largest request body, in KiB.
    pub max_body_kb: usize,
    /// How long a request's body may take to arrive and its answer to be made, in seconds.
    pub request_timeout_secs: u64,
    /// How long a connection may take to send a request's headers (or sit idle between
    /// requests), in seconds; then it is closed.
    pub header_timeout_secs: u64,
    /// The largest request line and headers together, in KiB; more is `431`.
    pub max_header_kb: usize,
    /// Connections open at once; one more is closed as soon as it is accepted.
    pub max_connections: usize,
    /// Connections open at once from one address (behind a proxy, the proxy's).
    pub max_connections_per_peer: usize,
    /// On SIGTERM, how long running turns get to finish before the process exits.
    pub shutdown_grace_secs: u64,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8787".to_owned(),
            tokens: BTreeMap::new(),
            admins: Vec::new(),
            approval_timeout_secs: 300,
            max_turns_per_principal: 4,
            max_sessions_per_principal: 1_000,
            plugin_commands: Vec::new(),
            event_buffer: 2_000,
            event_buffer_kb: 1_024,
            max_body_kb: 256,
            request_timeout_secs: 30,
            header_timeout_secs: 10,
            max_header_kb: 16,
            max_connections: 512,
            max_connections_per_peer: 64,
            shutdown_grace_secs: 30,
        }
    }
}

pub(super) fn check(config: &Config) -> Result<(), ConfigError> {
    let serve = &config.serve;
    let error = |field: &str, message: String| config.error_near(field, "serve", message);
    for (principal, variable) in &serve.tokens {
        if principal.is_empty()
            || !principal.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(error(
                "serve.tokens",
                format!("the principal `{principal}` must be letters, digits, `_` and `-`"),
            ));
        }
        if !is_variable_name(variable) {
            // Not repeated: a token pasted here by mistake must not reach a log.
            return Err(error(
                &format!("serve.tokens.{principal}"),
                "must be the NAME of the variable that holds the principal's token, not the token".into(),
            ));
        }
    }
    if let Some(admin) = serve.admins.iter().find(|admin| !serve.tokens.contains_key(*admin)) {
        return Err(error("serve.admins", format!("`{admin}` has no entry in `serve.tokens`")));
    }
    for name in &serve.plugin_commands {
        let bare = name.strip_prefix('/').unwrap_or(name);
        let well_formed = !bare.is_empty() && !bare.contains(|c: char| c.is_whitespace() || c == '/');
        if !well_formed || bare != name {
            let hint =
                if well_formed { format!("; write `\"{bare}\"`, without the slash") } else { String::new() };
            return Err(error(
                "serve.plugin_commands",
                format!("`{name}` is not a command's name (such as \"notes\", or \"*\" for every one){hint}"),
            ));
        }
    }
    for (field, value) in [
        ("serve.approval_timeout_secs", serve.approval_timeout_secs as usize),
        ("serve.max_turns_per_principal", serve.max_turns_per_principal),
        ("serve.max_sessions_per_principal", serve.max_sessions_per_principal),
        ("serve.event_buffer", serve.event_buffer),
        ("serve.max_body_kb", serve.max_body_kb),
        ("serve.request_timeout_secs", serve.request_timeout_secs as usize),
        ("serve.event_buffer_kb", serve.event_buffer_kb),
        ("serve.header_timeout_secs", serve.header_timeout_secs as usize),
        ("serve.max_connections", serve.max_connections),
        ("serve.max_connections_per_peer", serve.max_connections_per_peer),
    ] {
        if value == 0 {
            return Err(error(field, "must be at least 1".into()));
        }
    }
    if serve.max_header_kb < MIN_HEADER_KB {
        // The HTTP parser needs this much room to read any request at all.
        return Err(error("serve.max_header_kb", format!("must be at least {MIN_HEADER_KB}")));
    }
    Ok(())
}

/// The least `max_header_kb`: the HTTP/1 parser's smallest read buffer.
pub const MIN_HEADER_KB: usize = 8;
