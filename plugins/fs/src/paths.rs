//! Turns the model's paths into paths inside `/workspace`, refusing the ones that would
//! leave it, and refuses files that are not regular files or folders. The reading of a
//! path is `workspace_path::normalize`, the one the permissions plugin matches rules with.
//! WASI confines the plugin anyway; these checks exist to give clear errors.

use std::path::{Component, Path, PathBuf};

pub use workspace_path::GUEST_ROOT as WORKSPACE;

/// Resolves `path` (relative to the workspace, or absolute under it) to a sandbox path.
/// Refuses `..`, absolute paths elsewhere, and symlinks on the way that point outside.
pub fn resolve(path: &str) -> Result<PathBuf, String> {
    let relative = workspace_path::normalize(path).map_err(|e| e.to_string())?;
    let mut resolved = PathBuf::from(WORKSPACE);
    if relative != "." {
        for part in relative.split('/') {
            resolved.push(part);
            check_not_escaping_link(&resolved)?;
        }
    }
    Ok(resolved)
}

/// Refuses to open what is neither a regular file nor a folder: opening a FIFO waits for a
/// writer forever, a device or socket is no file to read. Missing paths pass (the open then
/// says so, or a write creates them).
pub fn check_openable(path: &Path) -> Result<(), String> {
    let Ok(meta) = std::fs::metadata(path) else { return Ok(()) };
    if meta.is_file() || meta.is_dir() {
        return Ok(());
    }
    // WASI as wasmtime serves it says only "unknown" for a FIFO or a socket, so that is
    // as precise as the kind can be named from inside the sandbox.
    Err(format!(
        "`{}` is a special file (a FIFO, socket or device), not a regular file or folder; \
         the file tools do not open special files",
        shown(path)
    ))
}

/// Refuses `path` when it, or what its symlinks lead to, is one of `exclude` (path rule
/// patterns): a rule on `.env` also holds for a link to `.env`.
pub fn check_not_excluded(path: &Path, exclude: &[String]) -> Result<(), String> {
    if exclude.is_empty() {
        return Ok(());
    }
    let given = shown(path);
    let real = real_relative(&given).unwrap_or_else(|| given.clone());
    for at in [&given, &real] {
        if workspace_path::excluded(exclude, at) {
            let via = if *at == given { String::new() } else { format!(" (it leads to `{real}`)") };
            return Err(format!("`{given}` is left out by the path rules{via}"));
        }
    }
    Ok(())
}

/// Most symlinks followed while resolving one path, as the kernel's limit.
const MAX_LINKS: usize = 40;

/// The workspace-relative path `relative` really names once every symlink on the way is
/// followed; `None` when it leads out, loops or holds an absolute link.
fn real_relative(relative: &str) -> Option<String> {
    let mut done: Vec<String> = Vec::new();
    // A path's components, without the empty and `.` ones that name nothing.
    fn parts(text: &str) -> impl DoubleEndedIterator<Item = String> + '_ {
        text.split('/').filter(|p| !p.is_empty() && *p != ".").map(str::to_owned)
    }
    let mut todo: std::collections::VecDeque<String> = parts(relative).collect();
    let mut links = 0;
    while let Some(part) = todo.pop_front() {
        if part == ".." {
            done.pop()?;
            continue;
        }
        done.push(part);
        let at = Path::new(WORKSPACE).join(done.join("/"));
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            links += 1;
            let target = std::fs::read_link(&at).ok()?;
            if links > MAX_LINKS || target.is_absolute() {
                return None;
            }
            done.pop();
            for part in parts(&target.to_string_lossy()).rev() {
                todo.push_front(part);
            }
        }
    }
    Some(if done.is_empty() { ".".to_owned() } else { done.join("/") })
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
