//! Paths the model gives inside one skill's folder: relative, without `..`, and not leaving
//! the folder through a symlink. The sandbox confines the plugin to its granted folders
//! anyway; this confines it to the one skill, which the sandbox cannot know, and gives an
//! error that says what was wrong.

use std::path::{Path, PathBuf};

use workspace_path::{LinkEscape, MAX_LINKS, resolve_links};

/// The parts of `path`, a path relative to a skill's folder: empty and `.` parts dropped;
/// empty, absolute, `..` and NUL refused.
pub fn relative_parts(path: &str) -> Result<Vec<String>, String> {
    let trimmed = path.trim();
    if trimmed.contains('\0') {
        return Err(format!("`{}` holds a NUL character", trimmed.escape_debug()));
    }
    if trimmed.starts_with('/') {
        return Err(format!("`{trimmed}` is an absolute path; give a path relative to the skill's folder"));
    }
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(format!("`{trimmed}` contains `..`; paths must stay inside the skill's folder"));
            }
            part => parts.push(part.to_owned()),
        }
    }
    if parts.is_empty() {
        return Err(format!("`{trimmed}` names the skill's folder itself; give a file inside it"));
    }
    Ok(parts)
}

/// Where the relative path `parts` really leads inside `root` once every symlink on the way is
/// followed, as parts relative to `root`. A link with an absolute target, one that climbs out
/// of `root`, or a loop is refused; `shown` is the path as the model gave it, for the error.
pub fn resolve(root: &Path, parts: &[String], shown: &str) -> Result<Vec<String>, String> {
    let done = resolve_links(root, parts).map_err(|escape| match escape {
        LinkEscape::LeadsOut { via } => {
            format!("`{shown}` goes through the symlink `{via}`, which leads outside the skill's folder")
        }
        LinkEscape::TooManyLinks => format!("`{shown}` goes through more than {MAX_LINKS} symlinks"),
    })?;
    if done.is_empty() {
        return Err(format!("`{shown}` leads to the skill's folder itself; give a file inside it"));
    }
    Ok(done)
}

/// The file `path` names inside the skill folder `root`, resolved and confined.
pub fn file_in(root: &Path, path: &str) -> Result<(PathBuf, Vec<String>), String> {
    let parts = relative_parts(path)?;
    let real = resolve(root, &parts, path.trim())?;
    Ok((root.join(real.join("/")), real))
}

/// Reads the regular file at `at` (`shown` as the model named it) as UTF-8 text of at most
/// `max_bytes`.
pub fn read_text(at: &Path, shown: &str, max_bytes: u64) -> Result<String, String> {
    let meta = std::fs::metadata(at).map_err(|error| format!("`{shown}`: {error}"))?;
    if meta.is_dir() {
        return Err(format!("`{shown}` is a folder; give a file inside it"));
    }
    // A FIFO would wait for a writer forever, and a device is no file to read.
    if !meta.is_file() {
        return Err(format!("`{shown}` is not a regular file"));
    }
    if meta.len() > max_bytes {
        return Err(format!(
            "`{shown}` takes {} bytes, over the {max_bytes} bytes one read may return (`max_file_kb`)",
            meta.len()
        ));
    }
    std::fs::read_to_string(at).map_err(|error| match error.kind() {
        std::io::ErrorKind::InvalidData => format!("`{shown}` is not UTF-8 text ({} bytes)", meta.len()),
        _ => format!("`{shown}`: {error}"),
    })
}
