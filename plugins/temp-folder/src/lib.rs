//! A temporary folder for the plugins' native tests: real files and links in it stand in for
//! a granted folder or the workspace, which a config may name by any absolute path, so by the
//! temporary folder's own. Shared by the tests of `skills`, `subagents` and `agents-md`, each
//! of which adds what its files are. Native only: a wasm32 build has no temporary folders and
//! no links to make.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

/// A folder being written; it is removed when dropped.
pub struct TempFolder {
    dir: tempfile::TempDir,
}

impl TempFolder {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().expect("a temporary folder") }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Its path as a config names it.
    pub fn config_path(&self) -> String {
        self.path().to_str().expect("a UTF-8 temporary path").to_owned()
    }

    /// The path of `file` in it, as the plugin names it.
    pub fn at(&self, file: &str) -> String {
        format!("{}/{file}", self.config_path())
    }

    /// Writes `path` (relative to the folder) with `text`, making its folders.
    pub fn file(&self, path: &str, text: &str) -> &Self {
        self.bytes(path, text.as_bytes())
    }

    /// Writes `path` (relative to the folder) with `bytes`, making its folders.
    pub fn bytes(&self, path: &str, bytes: &[u8]) -> &Self {
        let at = self.within(path);
        std::fs::create_dir_all(at.parent().expect("a file has a folder")).expect("make the folders");
        std::fs::write(at, bytes).expect("write the file");
        self
    }

    /// A symlink at `path` (relative to the folder) to `target`, as written.
    pub fn link(&self, path: &str, target: &str) -> &Self {
        let at = self.within(path);
        std::fs::create_dir_all(at.parent().expect("a link has a folder")).expect("make the folders");
        std::os::unix::fs::symlink(target, at).expect("make the link");
        self
    }

    /// Where `path`, relative to the folder, lies; an absolute one would write outside it.
    fn within(&self, path: &str) -> PathBuf {
        assert!(!path.starts_with('/'), "`{path}` is relative to the folder");
        self.path().join(path)
    }
}

impl Default for TempFolder {
    fn default() -> Self {
        Self::new()
    }
}
