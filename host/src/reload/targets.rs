//! What the watcher watches for a deployment, and which changed paths matter: the config
//! file, `plugins.lock` when a plugin comes from a registry, each `.wasm` component, each
//! plugin folder's sources — never a folder's build
//! outputs or installed packages, nor the deployment's own store and cache, which the host
//! and its builds write as they run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use notify::RecursiveMode;

use crate::config::{Config, PluginOrigin, PluginSource};

/// What one deployment's watcher watches.
#[derive(Default)]
pub(super) struct Targets {
    /// Folders handed to the OS watcher.
    pub dirs: BTreeSet<(PathBuf, RecursiveMode)>,
    /// Exact files that matter (the config, `.wasm` components, a crate's manifest).
    pub files: BTreeSet<PathBuf>,
    /// Plugin source folders whose files matter (all but build outputs).
    pub folders: BTreeSet<PathBuf>,
    /// The deployment's own files (its session store and journals, its compile cache): the
    /// host writes them as it runs, so they never matter, wherever they lie.
    private: Vec<PathBuf>,
}

impl Targets {
    /// What `config` runs.
    pub fn of(config: &Config) -> Self {
        let mut targets = Self {
            private: config.private_files().iter().map(|path| absolute(path)).collect(),
            ..Self::default()
        };
        targets.file(absolute(&config.source.file));
        if config.plugins.iter().any(|p| p.enabled && matches!(p.origin(), PluginOrigin::Oci(_))) {
            // `plugin update` moves a pin by rewriting the lock alone.
            targets.file(absolute(&config.lock_path()));
        }
        for entry in config.plugins.iter().filter(|p| p.enabled) {
            let Some(path) = entry.local_path().map(|path| absolute(&config.resolve(path))) else { continue };
            match PluginSource::of(&path) {
                Some(PluginSource::Crate) => {
                    targets.file(path.join("Cargo.toml"));
                    targets.dirs.insert((path.join("src"), RecursiveMode::Recursive));
                    targets.folders.insert(path);
                }
                Some(PluginSource::Python | PluginSource::TypeScript) => {
                    targets.dirs.insert((path.clone(), RecursiveMode::Recursive));
                    targets.folders.insert(path);
                }
                Some(PluginSource::Component) | None => targets.file(path),
            }
        }
        targets
    }

    /// Whether a change at `path` may change what the deployment runs.
    pub fn covers(&self, path: &Path) -> bool {
        if self.private.iter().any(|private| path.starts_with(private)) {
            return false;
        }
        self.files.contains(path)
            || self.folders.iter().any(|dir| path.strip_prefix(dir).is_ok_and(|rest| !is_build_output(rest)))
    }

    fn file(&mut self, path: PathBuf) {
        // Editors save by renaming a new file over the old one, which ends a watch on the
        // file itself; watching its folder survives that.
        if let Some(parent) = path.parent() {
            self.dirs.insert((parent.to_path_buf(), RecursiveMode::NonRecursive));
        }
        self.files.insert(path);
    }
}

/// Whether a path inside a plugin folder is a build's output or an installed package rather
/// than its source (a build writes there, which must not start another).
fn is_build_output(relative: &Path) -> bool {
    relative
        .components()
        .any(|part| PluginSource::NOT_SOURCE.iter().any(|skipped| part.as_os_str() == *skipped))
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deployment folder with a Python plugin folder and a crate folder, and its targets.
    fn deployment(extra: &str) -> (tempfile::TempDir, Targets) {
        let dir = tempfile::tempdir().unwrap();
        let root = absolute(dir.path());
        std::fs::create_dir_all(root.join("py/build")).unwrap();
        std::fs::write(root.join("py/pyproject.toml"), "[project]\nname = \"py\"\n").unwrap();
        std::fs::create_dir_all(root.join("rs/src")).unwrap();
        std::fs::write(root.join("rs/Cargo.toml"), "[package]\nname = \"rs\"\n").unwrap();
        let text = format!(
            "[model]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n{extra}\n\
             [[plugin]]\npath = \"py\"\n[[plugin]]\npath = \"rs\"\n"
        );
        std::fs::write(root.join("config.toml"), text).unwrap();
        let config = Config::load(&root.join("config.toml")).unwrap();
        (dir, Targets::of(&config))
    }

    #[test]
    fn sources_and_the_config_matter_and_build_outputs_do_not() {
        let (dir, targets) = deployment("");
        let root = absolute(dir.path());
        for path in ["config.toml", "py/plugin.py", "py/pkg/util.py", "rs/Cargo.toml", "rs/src/lib.rs"] {
            assert!(targets.covers(&root.join(path)), "{path}");
        }
        for path in [
            "sessions.db",
            "config.toml.swp",
            "py/build/py.wasm",
            "py/build/tmp123/app.wasm",
            "py/__pycache__/plugin.cpython-312.pyc",
            "py/.venv/lib/x.py",
            "rs/target/release/rs.wasm",
            "elsewhere/file",
        ] {
            assert!(!targets.covers(&root.join(path)), "{path}");
        }
    }

    #[test]
    fn the_lock_matters_once_a_plugin_comes_from_a_registry() {
        let (dir, targets) = deployment("");
        let root = absolute(dir.path());
        assert!(!targets.covers(&root.join("plugins.lock")));
        let (dir, targets) = deployment("[[plugin]]\noci = \"127.0.0.1:5000/p:1\"\n");
        assert!(targets.covers(&absolute(dir.path()).join("plugins.lock")));
    }

    #[test]
    fn the_deployments_own_store_and_cache_never_matter_even_in_a_plugin_folder() {
        let (dir, targets) =
            deployment("[storage]\npath = \"py/sessions.db\"\n[runtime]\ncache_dir = \"py/cache\"\n");
        let root = absolute(dir.path());
        for path in ["py/sessions.db", "py/sessions.db-wal", "py/cache/abc.cwasm"] {
            assert!(!targets.covers(&root.join(path)), "{path}");
        }
        assert!(targets.covers(&root.join("py/plugin.py")));
    }
}
