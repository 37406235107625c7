//! Ours (`.agents/agents/*.md`): the fields are the child's spec, as the `agents` import
//! names them. A field we do not know is noted, since it is most likely a misspelt one.

use frontmatter::Fields;

use super::{Draft, Problems, description, name, tool_list};
use crate::format::Format;
use crate::tools::ToolRules;

const FIELDS: &[&str] = &["name", "description", "tools", "model", "mode", "max_turns"];

pub fn read(fields: &Fields) -> Result<Draft, Vec<String>> {
    let mut problems = Problems::default();
    let mut notes = Vec::new();
    let draft = Draft {
        name: problems.take(name(fields)),
        description: problems.take(description(fields)),
        tools: ToolRules {
            allow: problems.take(tool_list(fields, "tools", Format::Agents, &mut notes)),
            deny: Vec::new(),
        },
        model: problems.take(fields.optional_string("model")),
        mode: problems.take(fields.optional_string("mode")),
        max_turns: problems.take(fields.optional_count("max_turns")),
        notes: Vec::new(),
    };
    for key in fields.keys().filter(|key| !FIELDS.contains(key)) {
        notes.push(format!("`{key}` is no field of ours and is ignored (ours: {})", FIELDS.join(", ")));
    }
    problems.finish(Draft { notes, ..draft })
}
