//! Where a `[[plugin]]` entry's component comes from: a path, a stock plugin the binary
//! carries, or an OCI registry. One home for the three keys, so every check that reads an
//! entry's source (grants, executed paths, reload targets, the loader) asks the same question.

use std::ops::Range;
use std::path::Path;

use super::{Config, ConfigError, PluginConfig};

/// The keys that name a plugin's source, in the order the config check lists them.
pub const ORIGIN_KEYS: [&str; 3] = ["path", "builtin", "oci"];

/// What an entry names as its component's source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginOrigin<'a> {
    /// A `.wasm` component or a plugin folder, as written (relative to the config file).
    Path(&'a Path),
    /// A stock plugin carried in the binary.
    Builtin(&'a str),
    /// `REGISTRY/REPOSITORY:TAG`, pinned in `plugins.lock`.
    Oci(&'a str),
}

impl PluginConfig {
    /// Where the component comes from. The config check refuses an entry that names none or
    /// more than one, so a loaded config always has exactly one.
    pub fn origin(&self) -> PluginOrigin<'_> {
        if let Some(builtin) = &self.builtin {
            PluginOrigin::Builtin(builtin.get_ref())
        } else if let Some(oci) = &self.oci {
            PluginOrigin::Oci(oci.get_ref())
        } else {
            PluginOrigin::Path(self.path.as_ref().map_or(Path::new(""), |path| path.get_ref()))
        }
    }

    /// The entry's local path, when it names one.
    pub fn local_path(&self) -> Option<&Path> {
        match self.origin() {
            PluginOrigin::Path(path) => Some(path),
            PluginOrigin::Builtin(_) | PluginOrigin::Oci(_) => None,
        }
    }

    /// Where in the file the source is named, for errors about the plugin.
    pub fn origin_span(&self) -> Range<usize> {
        let spans = [
            self.path.as_ref().map(|key| key.span()),
            self.builtin.as_ref().map(|key| key.span()),
            self.oci.as_ref().map(|key| key.span()),
        ];
        spans.into_iter().flatten().next().unwrap_or(0..0)
    }

    /// The source as messages name it: the path, `builtin "NAME"` or `oci "REF"`.
    pub fn origin_label(&self) -> String {
        match self.origin() {
            PluginOrigin::Path(path) => path.display().to_string(),
            PluginOrigin::Builtin(name) => format!("builtin \"{name}\""),
            PluginOrigin::Oci(reference) => format!("oci \"{reference}\""),
        }
    }

    /// The keys this entry sets among `ORIGIN_KEYS`.
    fn origin_keys(&self) -> Vec<&'static str> {
        let set = [self.path.is_some(), self.builtin.is_some(), self.oci.is_some()];
        ORIGIN_KEYS.into_iter().zip(set).filter_map(|(key, set)| set.then_some(key)).collect()
    }
}

/// Every entry names its source with exactly one key.
pub(super) fn check_origins(config: &Config) -> Result<(), ConfigError> {
    for (index, plugin) in config.plugins.iter().enumerate() {
        let keys = plugin.origin_keys();
        let message = match keys.as_slice() {
            [_] => continue,
            [] => "names no component: give it `path = \"FOLDER or FILE.wasm\"`, `builtin = \"NAME\"` \
                   (a stock plugin this binary carries) or `oci = \"REGISTRY/REPOSITORY:TAG\"`"
                .to_owned(),
            several => format!(
                "sets {}: a plugin comes from one source, so keep one of them",
                several.iter().map(|key| format!("`{key}`")).collect::<Vec<_>>().join(" and ")
            ),
        };
        let field = format!("plugin[{index}].{}", keys.first().copied().unwrap_or("path"));
        return Err(match keys.first() {
            Some(_) => config.error_at(plugin.origin_span(), field, message),
            // No key to point at: the entry's own line, its `[[plugin]]`.
            None => config.error(format!("plugin[{index}]"), message),
        });
    }
    Ok(())
}
