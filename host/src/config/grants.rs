//! Granted folders that would hand a plugin the host's own files: the config (and so every
//! grant), plugin code, the session store, the compile cache and its key. A grant that
//! holds one of them, or sits inside a folder of them, is refused at load.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::load::line_of_segments;
use super::{Config, ConfigError};

/// One of the host's own files or folders, and what a plugin that saw it would get.
pub(super) struct Sensitive {
    pub(super) path: PathBuf,
    pub(super) what: String,
    /// A folder: a grant inside it is refused too.
    pub(super) folder: bool,
}

/// Refuses the first `[plugin.grants.dirs]` entry that overlaps one of the host's own paths.
pub(super) fn check(config: &Config) -> Result<(), ConfigError> {
    let sensitive = sensitive_paths(config);
    for (index, plugin) in config.plugins.iter().enumerate() {
        for (guest, grant) in &plugin.grants.dirs {
            let granted = real_path(&config.resolve(&grant.host));
            let Some((found, relation)) = sensitive.iter().find_map(|item| overlap(&granted, item)) else {
                continue;
            };
            let entry = format!("plugin[{index}]");
            let segments = [entry.as_str(), "grants", "dirs", guest.as_str()];
            return Err(ConfigError {
                file: config.source.file.clone(),
                line: line_of_segments(&config.source.text, segments.into_iter()),
                field: Some(format!("{entry}.grants.dirs.\"{guest}\"")),
                message: format!(
                    "{entry} ({}) may not be granted {}: that folder {relation} {}; grant a folder \
                     that holds none of the host's own files",
                    plugin.path.get_ref().display(),
                    granted.display(),
                    found.what,
                ),
            });
        }
    }
    Ok(())
}

/// How `granted` overlaps `item`, if it does.
pub(super) fn overlap<'a>(granted: &Path, item: &'a Sensitive) -> Option<(&'a Sensitive, &'static str)> {
    if item.path.starts_with(granted) {
        Some((item, if item.path == granted { "is" } else { "contains" }))
    } else if item.folder && granted.starts_with(&item.path) {
        Some((item, "is inside"))
    } else {
        None
    }
}

pub(super) fn sensitive_paths(config: &Config) -> Vec<Sensitive> {
    let mut paths = Vec::new();
    let mut add = |path: PathBuf, what: String, folder: bool| {
        let path = real_path(&path);
        paths.push(Sensitive { what: format!("{what} {}", path.display()), path, folder });
    };
    add(config.source.file.clone(), "the config file (every plugin's grants)".into(), false);
    let store = config.resolve(&config.storage.path);
    add(store.clone(), "the session store (every session's history and state)".into(), false);
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut journal = store.clone().into_os_string();
        journal.push(suffix);
        add(journal.into(), "the session store's journal".into(), false);
    }
    let cache = config.resolve(&config.runtime.cache_dir);
    add(super::compile_cache_key_path(&cache), "the compile cache's key".into(), false);
    add(cache, "the compile cache (machine code the host runs)".into(), true);
    for (index, plugin) in config.plugins.iter().enumerate() {
        let path = config.resolve(plugin.path.get_ref());
        if path.is_dir() {
            add(path, format!("the source folder of plugin[{index}] (code the host builds and runs)"), true);
        } else {
            add(path, format!("the component of plugin[{index}] (code the host runs)"), false);
        }
    }
    paths
}

/// `path` with symbolic links resolved as far as it exists, and `.`/`..` taken out of the
/// rest, so a link or a detour cannot hide an overlap.
pub(super) fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let lexical = lexical(path);
    let mut missing: Vec<OsString> = Vec::new();
    let mut existing = lexical.as_path();
    loop {
        if let Ok(mut real) = std::fs::canonicalize(existing) {
            real.extend(missing.iter().rev());
            return real;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                existing = parent;
            }
            _ => return lexical,
        }
    }
}

fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_do_not_exist_yet_are_resolved_through_the_part_that_does() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(real_path(&link.join("not/yet/../there")), real.join("not/there"));
    }
}
