//! The tools' work, one function per tool, each with its typed arguments (their doc comments
//! are the model's descriptions). Every path goes through `paths::resolve` first. `exclude`
//! is filled in by policy plugins (permissions) with the path rules a call must not reach:
//! walks leave those paths out, and a path whose symlinks lead to one is refused.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use agent_host_sdk::edits;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::glob;
use crate::paths::{WORKSPACE, check_not_excluded, check_openable, resolve, shown};

/// Most lines or matches a listing returns, so one call cannot flood the context.
const MAX_ENTRIES: usize = 500;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// Path relative to the workspace
    path: String,
    #[schemars(range(min = 1))]
    start_line: Option<usize>,
    #[schemars(range(min = 1))]
    end_line: Option<usize>,
    /// Path patterns to leave out
    #[serde(default)]
    exclude: Vec<String>,
}

/// The file's lines (1-based, inclusive range), each prefixed with its number.
pub fn read_file(args: ReadArgs) -> Result<String, String> {
    let path = resolve(&args.path)?;
    check_not_excluded(&path, &args.exclude)?;
    check_openable(&path)?;
    let text = std::fs::read_to_string(&path).map_err(|e| io_error(&path, e))?;
    let start = args.start_line.unwrap_or(1).max(1);
    let end = args.end_line.unwrap_or(usize::MAX);
    if end < start {
        return Err(format!("end_line {end} is before start_line {start}"));
    }
    let mut out = String::new();
    for (number, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if number >= start && number <= end {
            let _ = writeln!(out, "{number:>6}\t{line}");
        }
    }
    if out.is_empty() && !text.is_empty() {
        return Err(format!("{} has {} lines; none in {start}..={end}", shown(&path), text.lines().count()));
    }
    Ok(out)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// Path relative to the workspace
    path: String,
    content: String,
    /// Path patterns to leave out
    #[serde(default)]
    exclude: Vec<String>,
}

/// Writes the whole file, creating parent folders.
pub fn write_file(args: WriteArgs) -> Result<String, String> {
    let path = resolve(&args.path)?;
    check_not_excluded(&path, &args.exclude)?;
    check_openable(&path)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    }
    // What was there, for the diff front ends show (none for a new file, or one not text).
    let before = std::fs::read_to_string(&path).ok();
    std::fs::write(&path, &args.content).map_err(|e| io_error(&path, e))?;
    edits::report(&shown(&path), before.as_deref(), Some(&args.content));
    Ok(format!("wrote {} bytes to {}", args.content.len(), shown(&path)))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// Path relative to the workspace
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
    /// Path patterns to leave out
    #[serde(default)]
    exclude: Vec<String>,
}

/// Replaces exact text; without `replace_all` the text must occur exactly once.
pub fn edit_file(args: EditArgs) -> Result<String, String> {
    let path = resolve(&args.path)?;
    check_not_excluded(&path, &args.exclude)?;
    check_openable(&path)?;
    if args.old_string.is_empty() {
        return Err("old_string is empty; use write_file to create a file".into());
    }
    let text = std::fs::read_to_string(&path).map_err(|e| io_error(&path, e))?;
    let count = text.matches(&args.old_string).count();
    if count == 0 {
        return Err(format!("old_string was not found in {}", shown(&path)));
    }
    if count > 1 && !args.replace_all {
        return Err(format!(
            "old_string occurs {count} times in {}; add context to make it unique or set replace_all",
            shown(&path)
        ));
    }
    let edited = text.replace(&args.old_string, &args.new_string);
    std::fs::write(&path, &edited).map_err(|e| io_error(&path, e))?;
    edits::report(&shown(&path), Some(&text), Some(&edited));
    Ok(format!("replaced {count} occurrence(s) in {}", shown(&path)))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Path relative to the workspace
    #[serde(default)]
    path: Option<String>,
    /// Path patterns to leave out
    #[serde(default)]
    exclude: Vec<String>,
}

/// The folder's entries, sorted, folders marked with a trailing `/`.
pub fn list_dir(args: ListArgs) -> Result<String, String> {
    let path = resolve(args.path.as_deref().unwrap_or("."))?;
    check_not_excluded(&path, &args.exclude)?;
    let mut names: Vec<String> = std::fs::read_dir(&path)
        .map_err(|e| io_error(&path, e))?
        .filter_map(Result::ok)
        .filter(|entry| !workspace_path::excluded(&args.exclude, &shown(&entry.path())))
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_dir()) { format!("{name}/") } else { name }
        })
        .collect();
    names.sort();
    Ok(if names.is_empty() { format!("{} is empty", shown(&path)) } else { names.join("\n") })
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    pattern: String,
    /// Path patterns to leave out
    #[serde(default)]
    exclude: Vec<String>,
}

/// Workspace files whose relative path matches the pattern.
pub fn glob(args: GlobArgs) -> Result<String, String> {
    let found: Vec<String> = walk_files(&args.exclude)?
        .into_iter()
        .map(|p| shown(&p))
        .filter(|p| glob::matches(&args.pattern, p))
        .collect();
    Ok(if found.is_empty() { format!("no files match `{}`", args.pattern) } else { limited(found) })
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    text: String,
    #[serde(default)]
    glob: Option<String>,
    /// Path patterns to leave out
    #[serde(default)]
    exclude: Vec<String>,
}

/// Lines containing the text, as `path:line: content`.
pub fn grep(args: GrepArgs) -> Result<String, String> {
    if args.text.is_empty() {
        return Err("text is empty".into());
    }
    let mut hits = Vec::new();
    for path in walk_files(&args.exclude)? {
        let relative = shown(&path);
        if args.glob.as_deref().is_some_and(|g| !glob::matches(g, &relative)) {
            continue;
        }
        // Files that are not UTF-8 text are skipped.
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        for (index, line) in text.lines().enumerate() {
            if line.contains(&args.text) {
                hits.push(format!("{relative}:{}: {line}", index + 1));
            }
        }
    }
    Ok(if hits.is_empty() { format!("no lines contain `{}`", args.text) } else { limited(hits) })
}

/// Every regular file under the workspace that `exclude` (path rule patterns) leaves in;
/// symlinks, FIFOs, devices and sockets are not followed or opened.
fn walk_files(exclude: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let mut folders = vec![PathBuf::from(WORKSPACE)];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).map_err(|e| io_error(&folder, e))?.filter_map(Result::ok) {
            if workspace_path::excluded(exclude, &shown(&entry.path())) {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => folders.push(entry.path()),
                Ok(t) if t.is_file() => files.push(entry.path()),
                _ => {}
            }
        }
    }
    files.sort();
    Ok(files)
}

fn limited(mut lines: Vec<String>) -> String {
    let total = lines.len();
    if total > MAX_ENTRIES {
        lines.truncate(MAX_ENTRIES);
        lines.push(format!("[{} more not shown]", total - MAX_ENTRIES));
    }
    lines.join("\n")
}

fn io_error(path: &Path, error: std::io::Error) -> String {
    format!("{}: {error}", shown(path))
}
