//! Claude Code's (`.claude/agents/*.md`): `name`, `description`, `tools` (a comma-separated
//! string of Claude Code's tool names), `disallowedTools` (the same, taken out), `model` (an
//! alias, `inherit` or a model's name) and `maxTurns`. Its other fields configure Claude
//! Code itself; those that would change what a child may do are noted as not applied.

use frontmatter::Fields;

use super::{Draft, Problems, description, name, note_ignored, tool_list};
use crate::format::Format;
use crate::tools::ToolRules;

const IGNORED: &[(&str, &str)] = &[
    ("permissionMode", "the child runs under this deployment's permission rules"),
    ("skills", "skills come from the skills plugin, offered to every session"),
    ("hooks", "hooks are plugins in this host"),
    ("mcpServers", "MCP servers are the deployment's, under [[mcp]]"),
];

pub fn read(fields: &Fields) -> Result<Draft, Vec<String>> {
    let mut problems = Problems::default();
    let mut notes = Vec::new();
    let name = problems.take(name(fields));
    let description = problems.take(description(fields));
    let allow = problems.take(tool_list(fields, "tools", Format::Claude, &mut notes));
    // A denied tool with no counterpart here is denied already: nothing to say of it.
    let deny = problems.take(tool_list(fields, "disallowedTools", Format::Claude, &mut Vec::new()));
    let model = problems.take(fields.optional_string("model"));
    let max_turns = problems.take(fields.optional_count("maxTurns"));
    note_ignored(fields, IGNORED, &mut notes);
    let tools = ToolRules { allow, deny: deny.unwrap_or_default() };
    problems.finish(Draft { name, description, tools, model, mode: None, max_turns, notes })
}
