//! The files of a skill's folder, for `load_skill`'s list and the copy of `scripts/` a script
//! runs from. Symlinks are listed but never walked into, hidden entries are left out, and
//! the walk stops at a count so a huge folder cannot stall a call.

use std::path::Path;

/// The most entries one listing gives.
pub const MAX_FILES: usize = 200;

/// A file under a folder: its path relative to that folder, and whether it is a regular file
/// (not a symlink).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub regular: bool,
}

/// The files under `root` (relative paths, sorted), at most [`MAX_FILES`]; the flag says
/// whether some were left out.
pub fn list(root: &Path) -> (Vec<Entry>, bool) {
    let mut found = Vec::new();
    let mut folders = vec![String::new()];
    let mut more = false;
    // Past the cap nothing more is listed, so nothing more is walked.
    while let Some(folder) = folders.pop().filter(|_| !more) {
        let Ok(entries) = std::fs::read_dir(root.join(&folder)) else { continue };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = if folder.is_empty() { name } else { format!("{folder}/{name}") };
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => folders.push(path),
                Ok(kind) if found.len() < MAX_FILES => found.push(Entry { path, regular: kind.is_file() }),
                Ok(_) => more = true,
                Err(_) => {}
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    (found, more)
}
