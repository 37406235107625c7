//! The component file a `[[plugin]]` entry runs, wherever it comes from: a path (a folder
//! built first), a stock plugin the binary carries, or an artifact pulled from a registry.

use std::path::PathBuf;

use super::builtin;
use super::source::build;
use crate::config::{Config, PluginConfig, PluginOrigin};
use crate::events::EventSink;

/// The `.wasm` file to load for `entry`; `Err` says why there is none, for the entry's error.
pub(super) async fn component_of(
    entry: &PluginConfig,
    config: &Config,
    sink: &dyn EventSink,
) -> Result<PathBuf, String> {
    match entry.origin() {
        PluginOrigin::Path(path) => build(config.resolve(path), config, sink).await,
        PluginOrigin::Builtin(name) => builtin::materialise(name, &config.resolve(&config.runtime.cache_dir)),
        PluginOrigin::Oci(reference) => crate::oci::component_of(reference, &entry.grants, config)
            .await
            .map_err(|error| error.to_string()),
    }
}
