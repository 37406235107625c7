//! A tool call's ACP `kind`, read from the tool's own description: editors pick an icon
//! and a wording from it. A tool that changes things is never `read`.

use agent_client_protocol::v1::schema::ToolKind;

use crate::agent::Host;

/// Words of a description, first match wins; the order puts the more specific first.
const KINDS: &[(ToolKind, &[&str])] = &[
    (ToolKind::SwitchMode, &["mode", "stage"]),
    (ToolKind::Delete, &["delete", "remove", "unlink"]),
    (ToolKind::Execute, &["run ", "runs ", "execute", "command", "shell"]),
    (ToolKind::Fetch, &["fetch", "download", "http", "url"]),
    (ToolKind::Search, &["search", "find", "grep", "glob"]),
    (ToolKind::Edit, &["write", "edit", "modify", "create", "append", "replace", "patch", "add", "update", "mark", "complete", "set "]),
    (ToolKind::Read, &["read", "list", "show", "view", "get "]),
];

/// The kind of tool `name` as the host offers it now (plugins' declared tools, then MCP
/// servers' tools); `other` for a tool it cannot find.
pub fn of(host: &Host, name: &str) -> ToolKind {
    match describe(host, name) {
        Some((description, mutates)) => classify(&description, mutates),
        None => ToolKind::Other,
    }
}

fn describe(host: &Host, name: &str) -> Option<(String, bool)> {
    for plugin in host.plugins().plugins().iter() {
        if let Some(tool) = plugin.declared_tools().iter().find(|tool| tool.spec.name == name) {
            return Some((tool.spec.description.clone(), tool.spec.mutates));
        }
    }
    for (_server, tools) in host.mcp().tools() {
        if let Some(tool) = tools.iter().find(|tool| tool.name == name) {
            return Some((tool.description.clone(), tool.mutates));
        }
    }
    None
}

pub fn classify(description: &str, mutates: bool) -> ToolKind {
    let text = description.to_lowercase();
    for (kind, words) in KINDS {
        if words.iter().any(|word| text.contains(word)) {
            if *kind == ToolKind::Read && mutates {
                return ToolKind::Other;
            }
            return *kind;
        }
    }
    if mutates { ToolKind::Edit } else { ToolKind::Other }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mutating_tool_is_never_read() {
        assert_eq!(classify("Read a file and show it", true), ToolKind::Other);
        assert_eq!(classify("Read a file and show it", false), ToolKind::Read);
    }

    #[test]
    fn kinds_come_from_the_words() {
        assert_eq!(classify("Runs a shell command in the sandbox", true), ToolKind::Execute);
        assert_eq!(classify("Write text to a file", true), ToolKind::Edit);
        assert_eq!(classify("Delete a file", true), ToolKind::Delete);
        assert_eq!(classify("Search files for a pattern", false), ToolKind::Search);
        assert_eq!(classify("Switch the agent's mode", false), ToolKind::SwitchMode);
        assert_eq!(classify("Something else", false), ToolKind::Other);
    }
}
