//! OpenCode's (`.opencode/agents/*.md`): the name is the file's (`review.md` is `review`);
//! `description`; `mode`, OpenCode's kind of agent (`primary`, `subagent` or `all`), of
//! which only `subagent` and `all` agents may be started by another; `model` as
//! `provider/model`; `tools`, a map of tool names to true or false over every tool (`"*":
//! false` first makes it a list of the allowed ones); `steps` (or the older `maxSteps`);
//! `disable`. Sampling and permission settings are noted as not applied.

use frontmatter::{Fields, Yaml, kind};

use super::{Draft, Problems, description, name_problem};
use crate::format::Format;
use crate::tools::{self, ToolRules};

const IGNORED: &[(&str, &str)] = &[
    ("temperature", "sampling is the deployment's"),
    ("top_p", "sampling is the deployment's"),
    ("permission", "the child runs under this deployment's permission rules; narrow its tools with `tools`"),
];

/// A primary agent is one a person talks to; a disabled one is none at all.
pub fn not_offered(fields: &Fields) -> Option<String> {
    if let Some(Yaml::String(mode)) = fields.get("mode")
        && mode.trim() == "primary"
    {
        return Some("`mode: primary` makes it an OpenCode primary agent, not a subagent".to_owned());
    }
    if let Some(Yaml::Boolean(true)) = fields.get("disable") {
        return Some("`disable: true`".to_owned());
    }
    None
}

pub fn read(fields: &Fields, stem: &str) -> Result<Draft, Vec<String>> {
    let mut problems = Problems::default();
    let mut notes = Vec::new();
    if let Some(why) = name_problem(stem) {
        problems.push(format!("the file's name gives the agent's name, and {why}; rename the file"));
    }
    let description = problems.take(description(fields));
    match problems.take(fields.optional_string("mode")).as_deref().map(str::trim) {
        None | Some("subagent" | "all") => {}
        Some(other) => problems.push(format!(
            "`mode` must be `primary`, `subagent` or `all` (OpenCode's kinds of agent), not `{other}`"
        )),
    }
    problems.take(fields.optional_bool("disable"));
    let tools = problems.take(tool_map(fields, &mut notes));
    let model = problems.take(fields.optional_string("model"));
    let steps = problems.take(fields.optional_count("steps"));
    let max_steps = problems.take(fields.optional_count("maxSteps"));
    super::note_ignored(fields, IGNORED, &mut notes);
    problems.finish(Draft {
        name: stem.to_owned(),
        description,
        tools,
        model,
        mode: None,
        max_turns: steps.or(max_steps),
        notes,
    })
}

/// `tools`: each tool on (`true`) or off (`false`); a tool left out is on, so only `"*":
/// false` narrows to the tools turned on.
fn tool_map(fields: &Fields, notes: &mut Vec<String>) -> Result<ToolRules, String> {
    let entries = match fields.get("tools") {
        None => return Ok(ToolRules::default()),
        Some(Yaml::Hash(entries)) => entries,
        Some(other) => {
            return Err(format!(
                "`tools` must be a map of tool names to true or false (OpenCode's form), not {}",
                kind(other)
            ));
        }
    };
    let mut on = Vec::new();
    // What turning on a tool with no counterpart says matters only to a list of tools on.
    let mut on_notes = Vec::new();
    let mut rules = ToolRules::default();
    for (key, value) in entries {
        let Yaml::String(key) = key else {
            return Err(format!("`tools` has a key that is {}, not a tool's name", kind(key)));
        };
        match (key.as_str(), value) {
            ("*", Yaml::Boolean(false)) => rules.allow = Some(Vec::new()),
            ("*", Yaml::Boolean(true)) => {}
            (name, Yaml::Boolean(true)) => on.extend(tools::ours(Format::OpenCode, name, &mut on_notes)),
            // A denied tool with no counterpart here is denied already: nothing to say of it.
            (name, Yaml::Boolean(false)) => {
                rules.deny.extend(tools::ours(Format::OpenCode, name, &mut Vec::new()));
            }
            (name, other) => {
                return Err(format!("`tools.{name}` must be true or false, not {}", kind(other)));
            }
        }
    }
    if let Some(allow) = &mut rules.allow {
        allow.extend(on);
        notes.extend(on_notes);
    }
    Ok(rules)
}
