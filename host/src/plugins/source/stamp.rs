//! What a source folder's build depends on, as one digest: an unchanged folder (with the same
//! SDK and toolchain) reuses its last component instead of building anew. Python and
//! JavaScript builds are not byte-identical, so without this every load of an unchanged
//! folder would also pay the cold compile of a "new" component.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::PluginSource;

/// The digest of every file under `dir` (names and contents, in a stable order) and of
/// `inputs` (the SDK's digest and the toolchain's stamp).
pub(super) fn digest(dir: &Path, inputs: &[&str]) -> Result<String, String> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files).map_err(|error| format!("cannot read {}: {error}", dir.display()))?;
    files.sort();
    let mut hasher = Sha256::new();
    for input in inputs {
        hasher.update(input.as_bytes());
        hasher.update([0]);
    }
    for (relative, path) in files {
        let contents =
            std::fs::read(&path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        hasher.update(relative.as_bytes());
        hasher.update([0]);
        hasher.update((contents.len() as u64).to_le_bytes());
        hasher.update(&contents);
    }
    Ok(hex::encode(hasher.finalize()))
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !PluginSource::NOT_SOURCE.iter().any(|skipped| name == *skipped) {
                collect(root, &path, files)?;
            }
        } else if path.is_file() {
            let relative = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned();
            files.push((relative, path));
        }
    }
    Ok(())
}

/// The component built last time from a folder with `digest`, if it is still there.
pub(super) fn reusable(component: &Path, digest: &str) -> Option<PathBuf> {
    let kept = std::fs::read_to_string(stamp_path(component)).ok()?;
    (kept.trim() == digest && component.is_file()).then(|| component.to_path_buf())
}

/// Records that `component` was built from a folder with `digest`.
pub(super) fn record(component: &Path, digest: &str) -> Result<(), String> {
    std::fs::write(stamp_path(component), digest)
        .map_err(|error| format!("cannot write {}: {error}", stamp_path(component).display()))
}

fn stamp_path(component: &Path) -> PathBuf {
    component.with_extension("source-digest")
}
