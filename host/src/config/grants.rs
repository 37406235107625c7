//! Granted folders, resolved once at load and checked there.
//!
//! Each grant's folder is made absolute and canonical when the config is loaded, and that
//! path is what the runtime opens (without following links, see `sandbox::open_folder`).
//! Refused: a grant that holds one of the host's own files or sits inside a folder of them
//! (the config and so every grant, plugin code, the session store, the compile cache and its
//! key); a grant inside (or the same as) another writable grant of the same plugin, which
//! the plugin could replace with a link; and a writable grant over what the host runs as
//! the operator (the toolchain, see `toolchain.rs`).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::{Config, ConfigError, PluginConfig};

/// One of the host's own files or folders, and what a plugin that saw it would get.
pub(super) struct Sensitive {
    pub(super) path: PathBuf,
    pub(super) what: String,
    /// A folder: a grant inside it is refused too.
    pub(super) folder: bool,
}

/// Makes every grant's host folder absolute and canonical, as far as it exists: the one
/// resolution of the path, which every run and every call then opens.
pub(super) fn resolve(config: &mut Config) {
    let dir = config.source.dir.clone();
    for plugin in &mut config.plugins {
        for grant in plugin.grants.dirs.values_mut() {
            let written = if grant.host.is_absolute() { grant.host.clone() } else { dir.join(&grant.host) };
            grant.host = real_path(&written);
        }
    }
}

/// Refuses the first `[plugin.grants.dirs]` entry that overlaps one of the host's own paths,
/// nests in a writable grant of its plugin, or is writable over the toolchain.
pub(super) fn check(config: &Config) -> Result<(), ConfigError> {
    let sensitive = sensitive_paths(config);
    let any_writable =
        config.plugins.iter().any(|plugin| plugin.grants.dirs.values().any(|grant| grant.write));
    let executed = if any_writable { super::toolchain::executed(config) } else { Vec::new() };
    for (index, plugin) in config.plugins.iter().enumerate() {
        check_nesting(config, index, plugin)?;
        for (guest, grant) in &plugin.grants.dirs {
            let granted = &grant.host;
            let found = sensitive.iter().find_map(|item| overlap(granted, item));
            let (found, relation, how) = match found {
                Some((found, relation)) => (found, relation, ""),
                None if grant.write => match executed.iter().find_map(|item| overlap(granted, item)) {
                    Some((found, relation)) => (found, relation, " writable"),
                    None => continue,
                },
                None => continue,
            };
            let advice = if how.is_empty() {
                "grant a folder that holds none of the host's own files"
            } else {
                "a plugin that wrote there would run code as the operator at the next start; grant \
                 it read-only, or a folder that holds none of them"
            };
            return Err(grant_error(
                config,
                index,
                guest,
                format!(
                    "plugin[{index}] ({}) may not be granted {}{how}: that folder {relation} {}; {advice}",
                    plugin.origin_label(),
                    granted.display(),
                    found.what,
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses a grant inside, or the same as, another writable grant of the same plugin: the
/// plugin could replace its folder (or one on the way) with a link to any other.
fn check_nesting(config: &Config, index: usize, plugin: &PluginConfig) -> Result<(), ConfigError> {
    for (outer_guest, outer) in plugin.grants.dirs.iter().filter(|(_, grant)| grant.write) {
        for (inner_guest, inner) in &plugin.grants.dirs {
            if inner_guest == outer_guest || !inner.host.starts_with(&outer.host) {
                continue;
            }
            let relation = if inner.host == outer.host { "is the same folder as" } else { "is inside" };
            let how = if inner.write { "writable" } else { "read-only" };
            return Err(grant_error(
                config,
                index,
                inner_guest,
                format!(
                    "plugin[{index}] ({}): the {how} grant \"{inner_guest}\" ({}) {relation} the writable \
                     grant \"{outer_guest}\" ({}); a plugin that writes there could replace the folder, \
                     or one on its way, with a link to any other; grant folders that do not nest \
                     in a writable one",
                    plugin.origin_label(),
                    inner.host.display(),
                    outer.host.display(),
                ),
            ));
        }
    }
    Ok(())
}

/// The error about plugin `index`'s grant `guest`, at its line.
fn grant_error(config: &Config, index: usize, guest: &str, message: String) -> ConfigError {
    config.error(format!("plugin[{index}].grants.dirs.\"{guest}\""), message)
}

/// Which of the host's own files `path` is (through links), or which of its folders it is
/// inside, said in words: a file the host writes for the operator (an export) must be none.
pub fn host_file_at(config: &Config, path: &Path) -> Option<String> {
    let path = real_path(&std::path::absolute(path).unwrap_or_else(|_| path.to_owned()));
    sensitive_paths(config)
        .into_iter()
        .find(|item| item.path == path || (item.folder && path.starts_with(&item.path)))
        .map(|item| item.what)
}

impl Config {
    /// The deployment's own files that nothing it runs may read, even where they lie in a
    /// folder it is shown (a plugin folder's build, which sees its repository): the session
    /// store and its journals, the compile cache and its key.
    pub fn private_files(&self) -> Vec<PathBuf> {
        let store = self.resolve(&self.storage.path);
        let mut files: Vec<PathBuf> = ["-wal", "-shm", "-journal"]
            .iter()
            .map(|suffix| {
                let mut journal = store.clone().into_os_string();
                journal.push(suffix);
                PathBuf::from(journal)
            })
            .collect();
        files.push(store);
        let cache = self.resolve(&self.runtime.cache_dir);
        files.push(super::compile_cache_key_path(&cache));
        files.push(cache);
        files
    }
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
        let Some(path) = plugin.local_path().map(|path| config.resolve(path)) else { continue };
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
