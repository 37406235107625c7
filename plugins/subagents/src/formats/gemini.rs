//! Gemini CLI's (`.gemini/agents/*.md`): `name`, `description`, `kind` (`local`, or `remote`
//! for an A2A agent elsewhere, which this host cannot run), `tools` (a list of Gemini CLI's
//! tool names; `*` is every tool), `model` (`inherit` by default) and `max_turns`. Its other
//! settings are noted as not applied.

use frontmatter::{Fields, Yaml};

use super::{Draft, Problems, description, name, note_ignored, tool_list};
use crate::format::Format;
use crate::tools::ToolRules;

const IGNORED: &[(&str, &str)] = &[
    ("temperature", "sampling is the deployment's"),
    ("timeout_mins", "a child's turn is bounded by the deployment's [agent] caps"),
    ("mcpServers", "MCP servers are the deployment's, under [[mcp]]"),
];

pub fn not_offered(fields: &Fields) -> Option<String> {
    match fields.get("kind") {
        Some(Yaml::String(kind)) if kind.trim() == "remote" => {
            Some("`kind: remote` is an agent reached over A2A, which this host does not run".to_owned())
        }
        _ => None,
    }
}

pub fn read(fields: &Fields) -> Result<Draft, Vec<String>> {
    let mut problems = Problems::default();
    let mut notes = Vec::new();
    let name = problems.take(name(fields));
    let description = problems.take(description(fields));
    match problems.take(fields.optional_string("kind")).as_deref().map(str::trim) {
        None | Some("local") => {}
        Some(other) => problems.push(format!("`kind` must be `local` or `remote`, not `{other}`")),
    }
    let allow = problems.take(tool_list(fields, "tools", Format::Gemini, &mut notes));
    let model = problems.take(fields.optional_string("model"));
    let max_turns = problems.take(fields.optional_count("max_turns"));
    note_ignored(fields, IGNORED, &mut notes);
    let tools = ToolRules { allow, deny: Vec::new() };
    problems.finish(Draft { name, description, tools, model, mode: None, max_turns, notes })
}
