//! What the Agent Skills specification asks of a SKILL.md's frontmatter, checked field by
//! field so that a skill that breaks several rules is told all of them at once:
//!
//! - `name`: required, 1 to 64 characters, only `a-z`, `0-9` and `-`, no `-` at either end,
//!   no `--`, and the same as the skill's folder;
//! - `description`: required, not blank, at most 1024 characters;
//! - `license`: optional, a string;
//! - `compatibility`: optional, a string of at most 500 characters;
//! - `metadata`: optional, a map of strings to strings;
//! - `allowed-tools`: optional, a space-separated string (a YAML list of names is read too,
//!   as some agents write it).
//!
//! Other fields are left alone: the specification may grow, and an agent's own additions are
//! no reason to refuse a skill.

use std::collections::BTreeMap;

use frontmatter::{Fields, Yaml, kind, not_a_string};

/// The longest `name`, in characters.
pub const MAX_NAME: usize = 64;
/// The longest `description`, in characters.
pub const MAX_DESCRIPTION: usize = 1024;
/// The longest `compatibility`, in characters.
pub const MAX_COMPATIBILITY: usize = 500;

/// A skill's frontmatter, every rule met.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Meta {
    pub name: String,
    pub description: String,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub metadata: BTreeMap<String, String>,
    pub allowed_tools: Vec<String>,
}

/// A SKILL.md read: its frontmatter and its body (the instructions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    pub meta: Meta,
    pub body: String,
}

/// Reads the whole SKILL.md `text` of the skill in the folder named `folder`; the error lists
/// every rule it breaks, each a sentence naming the field.
pub fn parse(text: &str, folder: &str) -> Result<SkillFile, Vec<String>> {
    let split = frontmatter::split(text).map_err(|why| vec![why])?;
    let meta = read_meta(split.frontmatter, folder)?;
    Ok(SkillFile { meta, body: split.body.to_owned() })
}

/// The frontmatter's fields, checked.
pub fn read_meta(yaml: &str, folder: &str) -> Result<Meta, Vec<String>> {
    let fields = Fields::load(yaml, "SKILL.md").map_err(|why| vec![why])?;
    let mut problems = Vec::new();
    let mut meta = Meta::default();

    match fields.required_string("name") {
        Ok(name) => {
            problems.extend(name_problems(&name, folder));
            meta.name = name;
        }
        Err(why) => problems.push(why),
    }
    match fields.required_string("description") {
        Ok(description) if description.trim().is_empty() => {
            problems.push("`description` is blank; say what the skill does and when to use it".to_owned())
        }
        Ok(description) => {
            if let Some(why) = too_long("description", &description, MAX_DESCRIPTION) {
                problems.push(why);
            }
            meta.description = description;
        }
        Err(why) => problems.push(why),
    }
    match fields.optional_string("license") {
        Ok(license) => meta.license = license,
        Err(why) => problems.push(why),
    }
    match fields.optional_string("compatibility") {
        Ok(compatibility) => {
            if let Some(why) =
                compatibility.as_deref().and_then(|c| too_long("compatibility", c, MAX_COMPATIBILITY))
            {
                problems.push(why);
            }
            meta.compatibility = compatibility;
        }
        Err(why) => problems.push(why),
    }
    match metadata(fields.get("metadata")) {
        Ok(map) => meta.metadata = map,
        Err(why) => problems.push(why),
    }
    match allowed_tools(fields.get("allowed-tools")) {
        Ok(tools) => meta.allowed_tools = tools,
        Err(why) => problems.push(why),
    }
    if problems.is_empty() { Ok(meta) } else { Err(problems) }
}

/// What is wrong with `name` in the folder `folder`: each rule it breaks.
pub fn name_problems(name: &str, folder: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let length = name.chars().count();
    if !(1..=MAX_NAME).contains(&length) {
        problems.push(format!("`name` must be 1 to {MAX_NAME} characters, not {length}"));
    }
    if let Some(bad) = name.chars().find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '-')) {
        problems.push(format!(
            "`name` \"{}\" holds `{}`: only lowercase letters a-z, digits 0-9 and hyphens are allowed",
            name.escape_debug(),
            bad.escape_debug()
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push(format!("`name` \"{}\" must not start or end with a hyphen", name.escape_debug()));
    }
    if name.contains("--") {
        problems.push(format!("`name` \"{}\" must not hold two hyphens in a row", name.escape_debug()));
    }
    if name != folder {
        problems.push(format!(
            "`name` \"{}\" must be the same as its folder's name, \"{}\"",
            name.escape_debug(),
            folder.escape_debug()
        ));
    }
    problems
}

fn metadata(value: Option<&Yaml>) -> Result<BTreeMap<String, String>, String> {
    let entries = match value {
        None => return Ok(BTreeMap::new()),
        Some(Yaml::Hash(entries)) => entries,
        Some(other) => {
            return Err(format!("`metadata` must be a map of strings to strings, not {}", kind(other)));
        }
    };
    let mut map = BTreeMap::new();
    for (key, value) in entries {
        let Yaml::String(key) = key else {
            return Err(format!("`metadata` has a key that is {}, not a string", kind(key)));
        };
        match value {
            Yaml::String(text) => map.insert(key.clone(), text.clone()),
            other => return Err(not_a_string(&format!("metadata.{key}"), other)),
        };
    }
    Ok(map)
}

fn allowed_tools(value: Option<&Yaml>) -> Result<Vec<String>, String> {
    match value {
        None => Ok(Vec::new()),
        Some(Yaml::String(text)) => Ok(text.split_whitespace().map(str::to_owned).collect()),
        Some(Yaml::Array(items)) => items
            .iter()
            .map(|item| match item {
                Yaml::String(name) => Ok(name.clone()),
                other => Err(format!("`allowed-tools` lists {}, not a tool's name", kind(other))),
            })
            .collect(),
        Some(other) => Err(format!(
            "`allowed-tools` must be a space-separated string of tool names, not {}",
            kind(other)
        )),
    }
}

fn too_long(field: &str, text: &str, most: usize) -> Option<String> {
    let length = text.chars().count();
    (length > most).then(|| format!("`{field}` must be at most {most} characters, not {length}"))
}
