//! What a plugin entry's `path` names, told apart by what the folder holds: one home for the
//! rule, read by the config check, the list of what builds run as the operator, and the
//! build itself.

use std::path::{Path, PathBuf};

/// What a plugin path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginSource {
    /// A built `.wasm` component.
    Component,
    /// A Rust crate folder (`Cargo.toml`), built with cargo.
    Crate,
    /// A Python folder (`pyproject.toml`), built with componentize-py.
    Python,
    /// A TypeScript folder (`package.json`), built with componentize-js.
    TypeScript,
}

impl PluginSource {
    /// What `path` holds, or None when it is neither a file nor a plugin folder.
    pub fn of(path: &Path) -> Option<Self> {
        if path.is_file() {
            Some(Self::Component)
        } else if path.join("Cargo.toml").is_file() {
            Some(Self::Crate)
        } else if path.join("pyproject.toml").is_file() {
            Some(Self::Python)
        } else if path.join("package.json").is_file() {
            Some(Self::TypeScript)
        } else {
            None
        }
    }

    /// Folders inside a plugin folder that are not its source: what builds write and what
    /// package managers install. A change there neither rebuilds nor reloads it.
    pub const NOT_SOURCE: &'static [&'static str] =
        &["target", "build", "node_modules", "__pycache__", ".git", ".venv"];

    /// What the config check says a path must be.
    pub const EXPECTED: &'static str = "a .wasm component, or a plugin folder: a Rust crate (Cargo.toml), \
                                        a Python project (pyproject.toml) or a TypeScript package \
                                        (package.json)";
}

/// Where the tools that build Python and TypeScript folders are installed (and the SDKs they
/// import written): `$AGENT_HOST_TOOLCHAINS`, else `~/.cache/agent-host/toolchains`.
pub fn toolchains_home() -> PathBuf {
    if let Some(dir) = std::env::var_os("AGENT_HOST_TOOLCHAINS") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
    home.join(".cache").join("agent-host").join("toolchains")
}
