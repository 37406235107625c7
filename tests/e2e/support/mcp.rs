//! The reference MCP servers the tests run against, installed once per machine by
//! `scripts/install-mcp-servers.sh` (pinned versions, into a cached folder), and `[[mcp]]`
//! blocks that start them.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use super::repo_root;

/// Where the installed servers are.
pub struct McpServers {
    /// server-everything's entry script, run with `node`: `stdio` or `streamableHttp`.
    pub everything: PathBuf,
    /// server-filesystem's entry script, run with `node` and the folders it may touch.
    pub filesystem: PathBuf,
    /// mcp-server-time's console script, in its virtual environment.
    pub time: PathBuf,
}

/// The servers, installed first when missing: a test never skips for want of one.
pub fn mcp_servers() -> &'static McpServers {
    static SERVERS: OnceLock<McpServers> = OnceLock::new();
    SERVERS.get_or_init(|| {
        let status = Command::new("bash")
            .arg(repo_root().join("scripts/install-mcp-servers.sh"))
            .status()
            .expect("bash runs the install script");
        assert!(status.success(), "installing the reference MCP servers failed: {status}");
        let home = std::env::var_os("AGENT_HOST_MCP_HOME").map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/agent-host/mcp")
        });
        let package =
            |name: &str| home.join("npm/node_modules/@modelcontextprotocol").join(name).join("dist/index.js");
        McpServers {
            everything: package("server-everything"),
            filesystem: package("server-filesystem"),
            time: home.join("venv/bin/mcp-server-time"),
        }
    })
}

/// A TOML string literal of `text`.
fn quoted(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// An `[[mcp]]` block named `name` starting `command` with `args`, with extra lines.
pub fn mcp_stdio_block(name: &str, command: &str, args: &[&str], extra: &str) -> String {
    let args: Vec<String> = args.iter().map(|arg| quoted(arg)).collect();
    format!(
        "[[mcp]]\nname = \"{name}\"\ncommand = {}\nargs = [{}]\n{extra}\n",
        quoted(command),
        args.join(", ")
    )
}

/// server-everything over stdio, as `name`.
pub fn everything_block(name: &str, extra: &str) -> String {
    let script = mcp_servers().everything.display().to_string();
    mcp_stdio_block(name, "node", &[&script, "stdio"], extra)
}
