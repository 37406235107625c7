//! Turns the model's paths into paths inside `/workspace`, refusing the ones that would
//! leave it. WASI confines the plugin anyway; these checks exist to give clear errors.

use std::path::{Component, Path, PathBuf};

/// The folder the operator preopened for this plugin.
pub const WORKSPACE: &str = "/workspace";

/// Resolves `path` (relative to the workspace, or absolute under it) to a sandbox path.
/// Refuses `..`, absolute paths elsewhere, and symlinks on the way that point outside.
pub fn resolve(path: &str) -> Result<PathBuf, String> {
    let path = path.trim();
    let relative = if let Some(rest) = path.strip_prefix(WORKSPACE) {
        if !(rest.is_empty() || rest.starts_with('/')) {
            return Err(format!("`{path}` is outside {WORKSPACE}"));
        }
        rest.trim_start_matches('/')
    } else if path.starts_with('/') {
        return Err(format!("`{path}` is outside {WORKSPACE}; use a path relative to it"));
    } else {
        path
    };
    let mut resolved = PathBuf::from(WORKSPACE);
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => {
                resolved.push(part);
                check_not_escaping_link(&resolved)?;
            }
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!("`{path}` contains `..`; paths must stay inside {WORKSPACE}"));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("`{path}` is not a path inside {WORKSPACE}"));
            }
        }
    }
    Ok(resolved)
}

/// Refuses `path` when it is a symlink whose target lies outside the workspace.
fn check_not_escaping_link(path: &Path) -> Result<(), String> {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return Ok(()) };
    if !meta.file_type().is_symlink() {
        return Ok(());
    }
    // WASI refuses to read links with absolute targets: those lead out by definition.
    let parent = path.parent().unwrap_or(Path::new(WORKSPACE));
    let inside = std::fs::read_link(path).is_ok_and(|target| stays_inside(parent, &target));
    if !inside {
        return Err(format!("`{}` is a symlink that leads outside {WORKSPACE}", shown(path)));
    }
    Ok(())
}

/// Whether `target`, read from a link in `parent`, stays inside the workspace (lexically).
fn stays_inside(parent: &Path, target: &Path) -> bool {
    let mut at: Vec<String> = if target.is_absolute() {
        Vec::new()
    } else {
        parent
            .components()
            .filter_map(|c| c.as_os_str().to_str().map(str::to_owned))
            .filter(|c| c != "/")
            .collect()
    };
    for component in target.components() {
        match component {
            Component::Normal(part) => at.push(part.to_string_lossy().into_owned()),
            Component::ParentDir => {
                at.pop();
            }
            _ => {}
        }
    }
    at.first().is_some_and(|first| first == "workspace")
}

/// A sandbox path as the model should see it: relative to the workspace.
pub fn shown(path: &Path) -> String {
    let text = path.strip_prefix(WORKSPACE).unwrap_or(path).to_string_lossy().into_owned();
    if text.is_empty() { ".".to_owned() } else { text }
}
