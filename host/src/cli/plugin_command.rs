//! `agent-host plugin ACTION`: working on plugins rather than running a deployment. One
//! variant per action, each in a file of its own; none reads a deployment's config.

use super::Status;
use super::plugin_new::{self, NewArgs};

#[derive(Debug, clap::Subcommand)]
pub enum PluginAction {
    /// Write a new plugin's folder, the authoring guide's starting point
    /// (docs/plugin-authoring.md): one tool, one setting, one command, ready to build and
    /// load with `path = "NAME"`. A Rust plugin's folder points at the SDK this binary
    /// carries, written out once under the toolchains folder.
    New(NewArgs),
}

pub fn run(action: PluginAction) -> Status {
    match action {
        PluginAction::New(args) => plugin_new::run(&args),
    }
}
