//! `agent-host plugin ACTION`: working on plugins rather than running a deployment. One
//! variant per action, each in a file of its own: `new` reads no config; the registry's
//! actions (`plugin_registry.rs`) read or write the deployment `--config` names.

use std::path::Path;

use super::Status;
use super::plugin_new::{self, NewArgs};
use super::plugin_registry::{self, RegistryAction};

#[derive(Debug, clap::Subcommand)]
pub enum PluginAction {
    /// Write a new plugin's folder, the authoring guide's starting point
    /// (docs/plugin-authoring.md): one tool, one setting, one command, ready to build and
    /// load with `path = "NAME"`. A Rust plugin's folder points at the SDK this binary
    /// carries, written out once under the toolchains folder.
    New(NewArgs),
    #[command(flatten)]
    Registry(RegistryAction),
}

/// Runs `action`; `config_file` is the deployment `--config` names.
pub async fn run(action: PluginAction, config_file: &Path) -> Status {
    match action {
        PluginAction::New(args) => plugin_new::run(&args),
        PluginAction::Registry(action) => plugin_registry::run(action, config_file).await,
    }
}
