//! A tool call's ACP `kind`, read from the tool's own description and from what its
//! contract declares: editors pick an icon and a wording from it. A tool that changes things
//! is never `read`; one that changes nothing outside the agent's own bookkeeping (it does
//! not declare `mutates`: a checklist, a plan, notes) is never `edit` nor `delete`, which
//! an editor shows as a change to its files — it is the agent `think`ing.

use agent_client_protocol::v1::schema::ToolKind;

use agent_host::agent::Host;

/// Words of a description, first match wins; the order puts the more specific first.
const KINDS: &[(ToolKind, &[&str])] = &[
    (ToolKind::SwitchMode, &["switch", "stage"]),
    (ToolKind::Delete, &["delete", "remove", "unlink"]),
    (ToolKind::Execute, &["run ", "runs ", "execute", "command", "terminal"]),
    (ToolKind::Fetch, &["fetch", "download", "http", "url"]),
    (ToolKind::Search, &["search", "find", "grep", "glob"]),
    (
        ToolKind::Edit,
        &[
            "write", "edit", "modify", "create", "append", "replace", "patch", "add", "update", "mark",
            "complete", "set ",
        ],
    ),
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
            return match kind {
                ToolKind::Read if mutates => ToolKind::Other,
                // Its words say it changes something, its contract that nothing but the
                // agent's bookkeeping: the contract is what the host enforces (plan modes,
                // approvals, durability all read `mutates`), so it decides.
                ToolKind::Edit | ToolKind::Delete if !mutates => ToolKind::Think,
                kind => *kind,
            };
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
    fn a_tool_that_changes_only_the_agents_bookkeeping_is_thinking_not_an_edit() {
        // A checklist plugin's tools, as such tools describe themselves; none declares `mutates`.
        assert_eq!(classify("Adds items to your list.", false), ToolKind::Think);
        assert_eq!(classify("Marks items as done, each with a reason.", false), ToolKind::Think);
        assert_eq!(classify("Removes items that no longer apply.", false), ToolKind::Think);
        // The same words on a tool that changes the workspace are an edit, a deletion.
        assert_eq!(classify("Adds a line to a file.", true), ToolKind::Edit);
        assert_eq!(classify("Removes a file.", true), ToolKind::Delete);
        // Reading and searching are what they say, whatever the bookkeeping.
        assert_eq!(classify("Lists the open items.", false), ToolKind::Read);
    }

    #[test]
    fn kinds_come_from_the_words() {
        assert_eq!(classify("Runs a command in the sandbox", true), ToolKind::Execute);
        assert_eq!(classify("Write text to a file", true), ToolKind::Edit);
        assert_eq!(classify("Delete a file", true), ToolKind::Delete);
        assert_eq!(classify("Search files for a pattern", false), ToolKind::Search);
        assert_eq!(classify("Switch to another stage of the work", false), ToolKind::SwitchMode);
        assert_eq!(classify("Something else", false), ToolKind::Other);
    }
}
