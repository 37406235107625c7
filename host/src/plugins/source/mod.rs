//! Plugins given as source folders, built into components by the host: a Rust crate with
//! cargo, a Python folder with componentize-py, a TypeScript folder with componentize-js. A
//! fresh clone needs no manual build step and an edited plugin is one save away from running.

mod cargo;
mod command;
mod folder;
mod python;
mod sdk;
mod stamp;
mod toolchain;
mod typescript;

use std::path::{Path, PathBuf};

use super::error::LoadError;
use crate::config::{Config, PluginSource};
use crate::sandbox::Sandbox;

use crate::events::{Event, EventSink};
pub use command::BuildSandbox;

pub use cargo::{build_crate, build_workspace};
pub use sdk::rust_sdk;

/// Where a build reports its progress: one line per step, such as cargo's
/// `Compiling my-plugin v0.1.0 (...)`. Called from the thread that reads cargo's output.
pub type Progress<'a> = &'a (dyn Fn(&str) + Sync);

/// The component for `config`'s plugin path `path`: the `.wasm` itself, or a source folder
/// built for it in the sandbox `[runtime] sandbox` names, the deployment's own files hidden.
/// A build takes seconds, not microseconds, so it runs off the async workers, and its
/// progress lines come back over a channel to be shown as `plugin_building` events.
pub(super) async fn build(path: PathBuf, config: &Config, sink: &dyn EventSink) -> Result<PathBuf, String> {
    if PluginSource::of(&path).is_none_or(|source| source == PluginSource::Component) {
        return Ok(path);
    }
    let sandbox = Sandbox::for_mode(config.runtime.sandbox).map_err(|error| {
        format!(
            "{} is a source folder, whose build runs in the OS sandbox, which this machine cannot \
             make: {error}; build it elsewhere and give its .wasm, or set [runtime] sandbox = \"none\"",
            path.display()
        )
    })?;
    let sandbox = BuildSandbox { sandbox, hidden: config.private_files() };
    let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let shown = path.display().to_string();
    let build = tokio::task::spawn_blocking(move || {
        resolve_component(&path, &sandbox, &|line| {
            let _ = progress_tx.send(line.to_owned());
        })
    });
    // The channel closes when the build is over and drops its sender.
    while let Some(progress) = progress_rx.recv().await {
        sink.emit(&Event::PluginBuilding { path: shown.clone(), progress });
    }
    build
        .await
        .map_err(|error| format!("the build was interrupted: {error}"))?
        .map_err(|error| error.to_string())
}

/// The component file for a configured plugin path: the path itself for a `.wasm`, or the
/// built artifact for a source folder, told apart by its manifest: `Cargo.toml` (Rust),
/// `pyproject.toml` (Python), `package.json` (TypeScript). Every step of a build runs in
/// `sandbox` (`command.rs`).
pub fn resolve_component(
    path: &Path,
    sandbox: &BuildSandbox,
    progress: Progress<'_>,
) -> Result<PathBuf, LoadError> {
    match PluginSource::of(path) {
        Some(PluginSource::Crate) => build_crate(path, sandbox, progress),
        Some(PluginSource::Python) => python::build(path, sandbox, progress),
        Some(PluginSource::TypeScript) => typescript::build(path, sandbox, progress),
        // A missing file is reported by the load that reads it.
        Some(PluginSource::Component) | None => Ok(path.to_path_buf()),
    }
}

/// A digest of what the plugin folder `dir` holds: every file's name and contents but those
/// of its build outputs and installed packages (`PluginSource::NOT_SOURCE`). An equal digest
/// means nothing its build reads from the folder changed.
pub fn source_digest(dir: &Path) -> Result<String, String> {
    stamp::digest(dir, &[])
}

/// The file name a source folder's component takes from its manifest's package name (the
/// part after a scope's `/`), refused when it would not be one plain file name.
fn component_file(manifest: &Path, name: &str) -> Result<String, String> {
    let stem = name.rsplit('/').next().unwrap_or(name);
    let plain = !stem.is_empty()
        && !stem.starts_with('.')
        && stem.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        Ok(format!("{stem}.wasm"))
    } else {
        Err(format!("{}: the name `{name}` must be letters, digits, `-`, `_` and `.`", manifest.display()))
    }
}
