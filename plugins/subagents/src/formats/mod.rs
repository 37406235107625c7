//! Reading a definition's frontmatter as its format says, into one [`Draft`]: each format's
//! own module knows its fields; what they share (names, descriptions, tool lists, fields
//! noted as not applied) is here. Every problem is collected, so a file is told all of them.

mod agents;
mod claude;
mod gemini;
mod opencode;

use frontmatter::{Fields, Yaml, kind};

use crate::format::Format;
use crate::tools::{self, ToolRules};

/// The longest name, in characters.
pub const MAX_NAME: usize = 64;

/// A definition's fields, read in our words; its model still as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Draft {
    pub name: String,
    pub description: String,
    pub tools: ToolRules,
    pub model: Option<String>,
    pub mode: Option<String>,
    pub max_turns: Option<u32>,
    /// What of the file is not carried over, for the operator.
    pub notes: Vec<String>,
}

/// Why a well-formed definition is not offered as a child agent, when it is not.
pub fn not_offered(format: Format, fields: &Fields) -> Option<String> {
    match format {
        Format::OpenCode => opencode::not_offered(fields),
        Format::Gemini => gemini::not_offered(fields),
        Format::Agents | Format::Claude => None,
    }
}

/// The frontmatter `fields` of the file named `stem` (without `.md`), read as `format`; the
/// error lists every problem, each a sentence naming the field.
pub fn read(format: Format, fields: &Fields, stem: &str) -> Result<Draft, Vec<String>> {
    match format {
        Format::Agents => agents::read(fields),
        Format::Claude => claude::read(fields),
        Format::OpenCode => opencode::read(fields, stem),
        Format::Gemini => gemini::read(fields),
    }
}

/// The problems found so far.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    /// `result`'s value; its error is kept.
    fn take<T: Default>(&mut self, result: Result<T, String>) -> T {
        result.unwrap_or_else(|why| {
            self.0.push(why);
            T::default()
        })
    }

    fn push(&mut self, why: String) {
        self.0.push(why);
    }

    fn finish(self, draft: Draft) -> Result<Draft, Vec<String>> {
        if self.0.is_empty() { Ok(draft) } else { Err(self.0) }
    }
}

/// The field `name`, checked.
fn name(fields: &Fields) -> Result<String, String> {
    let name = fields.required_string("name")?;
    name_problem(&name).map_or(Ok(name), Err)
}

/// What is wrong with `name` as an agent's name: the model writes it in `task`'s `agent`.
pub fn name_problem(name: &str) -> Option<String> {
    let length = name.chars().count();
    if !(1..=MAX_NAME).contains(&length) {
        return Some(format!("`name` must be 1 to {MAX_NAME} characters, not {length}"));
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))) {
        return Some(format!(
            "`name` \"{}\" holds `{}`: only letters a-z and A-Z, digits, `-`, `_` and `.` are allowed",
            name.escape_debug(),
            bad.escape_debug()
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Some(format!("`name` \"{}\" must start with a letter or a digit", name.escape_debug()));
    }
    None
}

/// The field `description`, which says the model when to use the agent.
fn description(fields: &Fields) -> Result<String, String> {
    let description = fields.required_string("description")?;
    if description.trim().is_empty() {
        return Err("`description` is blank; say what the agent does and when to use it".to_owned());
    }
    Ok(description)
}

/// A list of tools, written as a comma-separated string (`Read, Grep`) or a YAML list, each
/// in this deployment's name; none when the field is not there.
fn tool_list(
    fields: &Fields,
    key: &str,
    format: Format,
    notes: &mut Vec<String>,
) -> Result<Option<Vec<String>>, String> {
    let written: Vec<String> = match fields.get(key) {
        None => return Ok(None),
        Some(Yaml::String(text)) => text.split(',').map(str::to_owned).collect(),
        Some(Yaml::Array(items)) => items
            .iter()
            .map(|item| match item {
                Yaml::String(name) => Ok(name.clone()),
                other => Err(format!("`{key}` lists {}, not a tool's name", kind(other))),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(format!(
                "`{key}` must be a comma-separated string or a list of tool names, not {}",
                kind(other)
            ));
        }
    };
    let names = written.iter().filter(|name| !name.trim().is_empty());
    Ok(Some(names.filter_map(|name| tools::ours(format, name, notes)).collect()))
}

/// A note for each of `ignored` (a field, and why it is not applied) that `fields` holds.
fn note_ignored(fields: &Fields, ignored: &[(&str, &str)], notes: &mut Vec<String>) {
    for (field, why) in ignored {
        if fields.get(field).is_some() {
            notes.push(format!("`{field}` is not applied: {why}"));
        }
    }
}
