//! A definition's `model`, as the name of a model of this deployment's endpoint. `models`
//! (the config) maps a value as written; otherwise each format's own words are read: every
//! format's `inherit` is the parent's model, Claude Code's aliases are too (they name no model
//! of this endpoint), OpenCode's `provider/model` is the model's own name.

use std::collections::BTreeMap;

use crate::format::Format;

/// Claude Code's model aliases: families, not models.
const CLAUDE_ALIASES: &[&str] = &["sonnet", "opus", "haiku", "opusplan", "default"];

/// The model a child of this definition asks for; none: its parent's.
pub fn ours(
    format: Format,
    written: Option<&str>,
    models: &BTreeMap<String, String>,
    notes: &mut Vec<String>,
) -> Option<String> {
    let written = written.map(str::trim).filter(|model| !model.is_empty())?;
    if let Some(mapped) = models.get(written) {
        return Some(mapped.clone());
    }
    if written == "inherit" {
        return None;
    }
    match format {
        Format::Claude if CLAUDE_ALIASES.contains(&written) => {
            notes.push(format!(
                "model `{written}` is a Claude Code alias that `models` does not map; the child uses its \
                 parent's model"
            ));
            None
        }
        Format::OpenCode => {
            // `anthropic/claude-sonnet-4-5`: the provider is OpenCode's; the endpoint is ours.
            let model = written.split_once('/').map_or(written, |(_, model)| model);
            Some(models.get(model).cloned().unwrap_or_else(|| model.to_owned()))
        }
        _ => Some(written.to_owned()),
    }
}
