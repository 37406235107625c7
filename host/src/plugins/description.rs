//! What a component says about itself before it is published: the contract version it
//! targets (its exported `guest` interface's), the exports it implements, and the powers
//! those exports hold (`powers.rs`) — what `agent-host plugin build` prints and a published
//! artifact's annotations carry.

use std::path::Path;

use serde_json::json;

use super::contract::Line;
use super::error::LoadError;
use super::loaded::{ComponentFile, LoadedPlugin, PluginSpec};
use super::powers;
use super::types::Exports;
use crate::config::{Grants, Limits, SandboxMode};
use crate::runtime::{SandboxEngine, cache};

/// A component's self-description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// `name@version`, from its manifest.
    pub label: String,
    /// The `agent-host:plugin` package version it targets (`0.2.7`).
    pub contract: String,
    /// The exports it implements, by their names in the contract.
    pub exports: Vec<&'static str>,
    /// The grants its exports need (`review`, `start_turns`), as their `[plugin.grants]` keys.
    pub powers: Vec<&'static str>,
}

/// Every export a plugin may implement, by its name in the contract.
const NAMED: [(Exports, &str); 16] = [
    (Exports::PROVIDE, "provide"),
    (Exports::CALL_TOOL, "call-tool"),
    (Exports::SESSION_START, "session-start"),
    (Exports::USER_PROMPT_SUBMIT, "user-prompt-submit"),
    (Exports::PRE_TOOL_USE, "pre-tool-use"),
    (Exports::POST_TOOL_USE, "post-tool-use"),
    (Exports::STOP, "stop"),
    (Exports::COMMAND, "command"),
    (Exports::STATUS, "status"),
    (Exports::COMPACT, "compact"),
    (Exports::PRE_COMPACT, "pre-compact"),
    (Exports::POST_COMPACT, "post-compact"),
    (Exports::VIEW, "view"),
    (Exports::TURN_END, "turn-end"),
    (Exports::REVIEW, "review"),
    (Exports::QUEUED, "queued"),
];

/// Describes the component at `path`: compiled (through the compile cache at `cache_dir`),
/// linked, asked for its manifest and configured with no settings.
pub async fn describe(
    engine: &SandboxEngine,
    path: &Path,
    cache_dir: &Path,
) -> Result<Description, LoadError> {
    let file = ComponentFile::read(path, cache_dir)?;
    let bytes = || file.bytes().map_err(anyhow::Error::from);
    let (component, _) = cache::component(engine.engine(), cache_dir, &file.hash, bytes)
        .map_err(|error| LoadError::Compile { path: path.to_path_buf(), detail: format!("{error:#}") })?;
    let (_, guest) = Line::of(&component, engine.engine())
        .map_err(|detail| LoadError::Link { path: path.to_path_buf(), detail })?;
    let contract = guest.rsplit_once('@').map_or(guest.as_str(), |(_, version)| version).to_owned();
    let settings = json!({});
    let plugin = LoadedPlugin::load(
        engine,
        PluginSpec {
            component: &file,
            config: &settings,
            limits: Limits::default(),
            grants: &Grants::default(),
            base_dir: path.parent().unwrap_or(Path::new(".")),
            fail_open: false,
            cache_dir,
            sandbox: SandboxMode::Namespaces,
        },
    )
    .await?;
    let implements = |export| plugin.implements(export);
    Ok(Description {
        label: plugin.label(),
        contract,
        exports: NAMED.iter().filter(|(export, _)| implements(*export)).map(|(_, name)| *name).collect(),
        powers: powers::held(implements).map(|power| power.grant.trim_end_matches(" = true")).collect(),
    })
}
