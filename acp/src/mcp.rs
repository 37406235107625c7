//! The MCP servers an editor passes with `session/new`, `session/load` or `session/resume`,
//! attached to that session alone through the same machinery as `[[mcp]]`: the same names
//! (`mcp__<server>__<tool>`), hooks, rules, time limits and process handling. They start in
//! a private empty folder, never the session's `cwd`: that is the project the editor opened,
//! which the deployment may let plugins (and so the model) write, and `npx`, `node ./x.js`
//! or a Python module would load code from it. A server whose command or files a plugin may
//! write is refused, as a `[[mcp]]` entry is (`config/server_code.rs`). What the editor
//! gives as values (variables, headers) stays values; nothing of it is written to the
//! config or the store.

use std::path::Path;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::McpServer;
use serde_json::json;

use agent_host::agent::{Host, LiveSession};
use agent_host::config::{McpServerConfig, header_problem, is_variable_name, name_problem};
use agent_host::mcp::{McpSet, private_folder};

/// What an editor asked to attach to a session: its servers as `[[mcp]]` entries, and the
/// private folder they start in.
pub struct Requested {
    entries: Vec<McpServerConfig>,
    folder: tempfile::TempDir,
}

/// The servers `servers` of a request whose `cwd` is `cwd`, checked: a request the host cannot
/// take is refused (with what was wrong and which server) before anything starts or is made.
pub fn requested(host: &Host, servers: &[McpServer], cwd: &Path) -> Result<Requested, Error> {
    if !cwd.is_absolute() {
        return Err(Error::invalid_params().data(format!("cwd `{}` is not an absolute path", cwd.display())));
    }
    let deployment = host.config();
    let mut entries = Vec::with_capacity(servers.len());
    for server in servers {
        let entry = entry(server).map_err(|problem| Error::invalid_params().data(problem))?;
        let clash = if deployment.mcp.iter().any(|other| other.name == entry.name) {
            Some("the deployment's `[[mcp]]` has a server of that name")
        } else if entries.iter().any(|other: &McpServerConfig| other.name == entry.name) {
            Some("it is given twice")
        } else {
            None
        };
        if let Some(clash) = clash {
            return Err(Error::invalid_params().data(format!("MCP server `{}`: {clash}", entry.name)));
        }
        entries.push(entry);
    }
    let folder = private_folder().map_err(|error| {
        Error::internal_error().data(format!("no private folder for the MCP servers to start in: {error}"))
    })?;
    for entry in &entries {
        if let Some(refusal) = deployment.server_code_refusal(entry, folder.path()) {
            return Err(Error::invalid_params().data(format!("MCP server `{}`: {refusal}", entry.name)));
        }
    }
    Ok(Requested { entries, folder })
}

impl Requested {
    /// Starts the servers and attaches them to `session`, in place of any it had. One that
    /// fails to start is attached as failed (named on stderr, its tools not offered), as a
    /// failed `[[mcp]]` server is.
    pub async fn attach(self, session: &mut LiveSession) {
        if self.entries.is_empty() && session.own_mcp().is_none() {
            return;
        }
        let started = McpSet::start_in_private_folder(&self.entries, self.folder).await;
        for (name, error) in started.set.failures() {
            tracing::warn!(server = %name, "the editor's MCP server did not start: {error}");
        }
        session.attach_mcp(started.set);
    }
}

/// `server` as an `[[mcp]]` entry, with every setting the file would default; or why the
/// host cannot take it.
fn entry(server: &McpServer) -> Result<McpServerConfig, String> {
    let (name, settings, env, headers) = match server {
        McpServer::Stdio(stdio) => (
            &stdio.name,
            json!({"command": stdio.command, "args": stdio.args}),
            stdio.env.iter().map(|v| (v.name.clone(), v.value.clone())).collect(),
            Vec::new(),
        ),
        McpServer::Http(http) => (
            &http.name,
            json!({"url": http.url}),
            Vec::new(),
            http.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect::<Vec<_>>(),
        ),
        McpServer::Sse(sse) => {
            return Err(format!(
                "MCP server `{}`: the SSE transport is not supported (the agent's mcpCapabilities say so); give a streamable HTTP url",
                sse.name
            ));
        }
        _ => return Err("an MCP server of a transport this agent does not know".into()),
    };
    let at = |problem: String| format!("MCP server `{name}`: {problem}");
    if let Some(problem) = name_problem(name) {
        return Err(at(problem));
    }
    if let Some((variable, _)) =
        env.iter().find(|(variable, _): &&(String, String)| !is_variable_name(variable))
    {
        return Err(at(format!("`{variable}` is not an environment variable name")));
    }
    if let Some(problem) = headers.iter().find_map(|(header, _)| header_problem(header)) {
        return Err(at(problem));
    }
    let mut settings = settings;
    settings["name"] = json!(name);
    let mut entry: McpServerConfig =
        serde_json::from_value(settings).map_err(|error| at(error.to_string()))?;
    if entry.command.as_deref().is_some_and(|command| command.trim().is_empty()) {
        return Err(at("its command is empty".into()));
    }
    entry.given.env = env;
    entry.given.headers = headers;
    Ok(entry)
}
