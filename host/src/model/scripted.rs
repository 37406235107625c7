//! A model that replays a file of turns: offline demos, tests, plugin authors' own tests.
//!
//! ```toml
//! [[turn]]
//! text = "Let me plan this."
//! tool_calls = [{ name = "notes_add", arguments = { notes = [{ title = "Write it" }] } }]
//!
//! [[turn]]
//! text = "Done."
//! ```
//!
//! The turn played is chosen by how many assistant messages the history already holds, so
//! a resumed session continues where it left off, and sessions never disturb each other.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Deserialize;

use super::{ModelError, ModelReply, ModelRequest, Role};
use crate::tools::ToolCall;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    #[serde(rename = "turn")]
    turns: Vec<ScriptTurn>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptTurn {
    #[serde(default)]
    text: String,
    #[serde(default)]
    tool_calls: Vec<ScriptCall>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCall {
    name: String,
    #[serde(default = "empty_object")]
    arguments: toml::Value,
}

fn empty_object() -> toml::Value {
    toml::Value::Table(toml::Table::new())
}

pub struct ScriptedModel {
    path: PathBuf,
    turns: Vec<ScriptTurn>,
}

impl ScriptedModel {
    pub fn from_file(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the model script {}", path.display()))?;
        Self::from_text(path, &text)
    }

    /// The script `text`, named after `path` (which need not exist: a script the binary
    /// carries).
    pub fn from_text(path: &Path, text: &str) -> anyhow::Result<Self> {
        let file: ScriptFile = toml::from_str(text)
            .with_context(|| format!("the model script {} is not valid", path.display()))?;
        Ok(Self { path: path.to_path_buf(), turns: file.turns })
    }

    /// No turns at all, named after `path`: for a run that calls no model (`check`,
    /// `sessions`) where no script is there to read.
    pub fn empty(path: &Path) -> Self {
        Self { path: path.to_path_buf(), turns: Vec::new() }
    }

    pub fn describe(&self) -> String {
        format!("scripted replay of {}", self.path.display())
    }

    pub fn complete(
        &self,
        request: &ModelRequest<'_>,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, ModelError> {
        let played = request.history.iter().filter(|m| m.role == Role::Assistant).count();
        let turn = self.turns.get(played).ok_or_else(|| ModelError::Script {
            detail: format!(
                "{} has {} turns and all have been played in this session",
                self.path.display(),
                self.turns.len()
            ),
        })?;
        // Stream word by word, as a real model would.
        for piece in turn.text.split_inclusive(' ') {
            on_text(piece);
        }
        let tool_calls = turn
            .tool_calls
            .iter()
            .enumerate()
            .map(|(index, call)| ToolCall {
                id: format!("call_{played}_{index}"),
                name: call.name.clone(),
                arguments: serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into()),
            })
            .collect();
        Ok(ModelReply { text: turn.text.clone(), tool_calls, ..ModelReply::default() })
    }
}
