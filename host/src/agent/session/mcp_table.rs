//! `/mcp` and `--check`'s view of the MCP servers: state, tools, start-up time, calls,
//! restarts and the last error of each.

use crate::agent::Host;
use crate::mcp::ServerStatus;
use crate::sanitize::one_line;

/// [`Host::mcp_table`]'s work.
pub(in crate::agent) fn mcp_table(host: &Host) -> String {
    host.mcp().statuses().iter().map(server_lines).collect::<Vec<_>>().join("\n")
}

/// [`Host::mcp_failures`]'s work.
pub(in crate::agent) fn mcp_failures(host: &Host) -> Vec<String> {
    let config = host.config();
    host.mcp()
        .failures()
        .into_iter()
        .map(|(name, error)| {
            let index = config.mcp.iter().position(|entry| entry.name == name).unwrap_or_default();
            let line = config
                .line_of(&format!("mcp[{index}].name"))
                .map(|line| format!(", line {line}"))
                .unwrap_or_default();
            format!(
                "{}{line}: mcp[{index}]: MCP server `{name}` did not start: {}",
                config.source.file.display(),
                one_line(&error)
            )
        })
        .collect()
}

fn server_lines(status: &ServerStatus) -> String {
    let mut head = format!("{:<24} {:<5} {}", status.name, status.transport.as_str(), status.state.as_str());
    if let Some(pid) = status.pid {
        head.push_str(&format!(", pid {pid}"));
    }
    if let Some(took) = status.startup {
        head.push_str(&format!(", started in {} ms", took.as_millis()));
    }
    head.push_str(&format!(
        "; {} tools (listed {} times); calls: {}; restarts: {}",
        status.tools.len(),
        status.listings,
        status.calls,
        status.restarts
    ));
    let mut lines = vec![head];
    if !status.tools.is_empty() {
        lines.push(format!("  tools: {}", status.tools.join(", ")));
    }
    for error in &status.tool_errors {
        lines.push(format!("  left out: {}", one_line(error)));
    }
    if let Some(error) = &status.last_error {
        lines.push(format!("  last error: {}", one_line(error)));
    }
    lines.join("\n")
}
