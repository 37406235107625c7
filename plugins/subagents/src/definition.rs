//! One definition file, read whole: its frontmatter as its format says, its body as the
//! child's system prompt, its model and tools in this deployment's words. What `task` starts
//! a child from.

use std::path::Path;

use frontmatter::Fields;

use crate::config::Config;
use crate::format::Format;
use crate::formats;
use crate::{models, tools};

/// The most bytes a definition may take: its body becomes a system prompt.
pub const MAX_FILE: u64 = 128 * 1024;

/// A definition a child can be started from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub description: String,
    /// The body; none when it is empty, so the child keeps the deployment's instructions.
    pub system_prompt: Option<String>,
    /// The only tools the child is offered; none: every tool its parent has.
    pub tools: Option<Vec<String>>,
    pub model: Option<String>,
    pub mode: Option<String>,
    pub max_turns: Option<u32>,
    /// What of the file is not carried over, for the operator.
    pub notes: Vec<String>,
}

/// What a well-formed file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    Offered(Definition),
    /// Not an agent another may start (OpenCode's primary agents, Gemini CLI's remote ones),
    /// and why.
    NotOffered(String),
}

/// Reads and checks the definition at `path`, written in `format`.
pub fn read_file(path: &Path, format: Format, config: &Config) -> Result<Read, Vec<String>> {
    let meta = std::fs::metadata(path).map_err(|error| vec![format!("it cannot be read: {error}")])?;
    if !meta.is_file() {
        return Err(vec!["it is not a regular file".to_owned()]);
    }
    if meta.len() > MAX_FILE {
        return Err(vec![format!(
            "it takes {} KiB, over the {} KiB a definition may take",
            meta.len().div_ceil(1024),
            MAX_FILE / 1024
        )]);
    }
    let text = std::fs::read_to_string(path).map_err(|error| match error.kind() {
        std::io::ErrorKind::InvalidData => vec!["it is not UTF-8 text".to_owned()],
        _ => vec![format!("it cannot be read: {error}")],
    })?;
    let file_name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    parse(&text, &file_name, format, config)
}

/// Reads `text`, the whole file called `file_name`, as `format`; the error lists every
/// problem, each a sentence naming the field.
pub fn parse(text: &str, file_name: &str, format: Format, config: &Config) -> Result<Read, Vec<String>> {
    let split = frontmatter::split(text).map_err(|why| vec![why])?;
    let fields = Fields::load(split.frontmatter, file_name).map_err(|why| vec![why])?;
    if let Some(why) = formats::not_offered(format, &fields) {
        return Ok(Read::NotOffered(why));
    }
    let stem = file_name.strip_suffix(".md").unwrap_or(file_name);
    let draft = formats::read(format, &fields, stem)?;
    let mut notes = draft.notes;
    let model = models::ours(format, draft.model.as_deref(), &config.models, &mut notes);
    let tools = tools::resolve(draft.tools, &config.all_tools, &mut notes);
    Ok(Read::Offered(Definition {
        name: draft.name,
        description: draft.description,
        system_prompt: (!split.body.is_empty()).then(|| split.body.to_owned()),
        tools,
        model,
        mode: draft.mode.map(|mode| mode.trim().to_owned()).filter(|mode| !mode.is_empty()),
        max_turns: draft.max_turns,
        notes,
    }))
}
