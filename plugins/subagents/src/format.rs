//! The formats an agent definition is written in: ours and three other agents'. A folder holds
//! one format, which decides how its files' fields are read (OpenCode's `mode` is not ours).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Ours: `.agents/agents/*.md`.
    Agents,
    /// Claude Code's: `.claude/agents/*.md`.
    Claude,
    /// OpenCode's: `.opencode/agents/*.md`.
    OpenCode,
    /// Gemini CLI's: `.gemini/agents/*.md`.
    Gemini,
}

impl Format {
    /// Every format, in the order a project's folders are read.
    pub const ALL: [Format; 4] = [Format::Agents, Format::Claude, Format::OpenCode, Format::Gemini];

    /// Where a project keeps definitions of this format, relative to the workspace.
    pub fn project_folder(self) -> &'static str {
        match self {
            Format::Agents => ".agents/agents",
            Format::Claude => ".claude/agents",
            Format::OpenCode => ".opencode/agents",
            Format::Gemini => ".gemini/agents",
        }
    }

    /// The agent whose format it is, as people call it.
    pub fn vendor(self) -> &'static str {
        match self {
            Format::Agents => "agent-host",
            Format::Claude => "Claude Code",
            Format::OpenCode => "OpenCode",
            Format::Gemini => "Gemini CLI",
        }
    }
}
