//! One reading of the paths a model gives the file tools, shared by the `fs` plugin (which
//! touches them) and the `permissions` plugin (which matches rules against them), so that a
//! rule sees the path the tool will really touch: `./.env`, `/workspace/.env`, ` .env`
//! and `a//.env/` are all `.env` and `a/.env`, and `..` is refused by both alike. Also the
//! one spelling of a granted folder's guest path, for the plugins configured with folders
//! (`skills`, `subagents`).

mod glob;
mod links;

pub use glob::glob_match;
pub use links::{LinkEscape, MAX_LINKS, resolve_links};

/// Where the workspace is mounted inside the plugins' sandbox.
pub const GUEST_ROOT: &str = "/workspace";

/// Why a path is not one inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// An absolute path elsewhere than the workspace.
    Outside(String),
    /// A `..` component: refused rather than resolved, since a symlink on the way would
    /// make the lexical answer wrong.
    ParentDir(String),
    /// A NUL character, which no file name can hold.
    Nul(String),
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathError::Outside(path) => {
                write!(f, "`{path}` is outside {GUEST_ROOT}; use a path relative to it")
            }
            PathError::ParentDir(path) => {
                write!(f, "`{path}` contains `..`; paths must stay inside {GUEST_ROOT}")
            }
            PathError::Nul(path) => write!(f, "`{}` holds a NUL character", path.escape_debug()),
        }
    }
}

impl std::error::Error for PathError {}

/// The workspace-relative form of `path`: surrounding whitespace trimmed, the guest prefix
/// (`/workspace/…`) removed, empty and `.` components dropped, `/` between components;
/// `.` for the workspace itself.
pub fn normalize(path: &str) -> Result<String, PathError> {
    let trimmed = path.trim();
    if trimmed.contains('\0') {
        return Err(PathError::Nul(path.to_owned()));
    }
    let relative = match trimmed.strip_prefix(GUEST_ROOT) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
        _ if trimmed.starts_with('/') => return Err(PathError::Outside(trimmed.to_owned())),
        _ => trimmed,
    };
    let mut parts = Vec::new();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(PathError::ParentDir(trimmed.to_owned())),
            part => parts.push(part),
        }
    }
    Ok(if parts.is_empty() { ".".to_owned() } else { parts.join("/") })
}

/// Why a path is not an absolute path inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestPathError {
    /// It does not start with `/`.
    Relative(String),
    /// A `..` component: a granted folder is named as itself, never through another.
    ParentDir(String),
    /// A NUL character, which no file name can hold.
    Nul(String),
    /// `/` itself: the whole sandbox, which is no one folder.
    Root,
}

/// The one spelling of `path`, an absolute path inside the plugins' sandbox such as a
/// granted folder's guest path: surrounding whitespace trimmed, empty and `.` components
/// dropped (`/skills//mine/` is `/skills/mine`). The caller words the error for its setting
/// (`folder-catalog`'s `granted_folder` does for skills and subagents).
pub fn normalize_guest(path: &str) -> Result<String, GuestPathError> {
    let trimmed = path.trim();
    if !trimmed.starts_with('/') {
        return Err(GuestPathError::Relative(trimmed.to_owned()));
    }
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(GuestPathError::ParentDir(trimmed.to_owned())),
            part if part.contains('\0') => return Err(GuestPathError::Nul(trimmed.to_owned())),
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(GuestPathError::Root);
    }
    Ok(format!("/{}", parts.join("/")))
}

/// Whether the normalized guest path `path` is the folder `folder` or lies inside it.
pub fn is_within(path: &str, folder: &str) -> bool {
    path == folder || path.strip_prefix(folder).is_some_and(|rest| rest.starts_with('/'))
}

/// Whether a path rule's pattern matches `path` (already normalized): the pattern is read
/// the way paths are (`./.env` is `.env`), `*` matches any run of characters including `/`,
/// `?` one character.
pub fn rule_matches(pattern: &str, path: &str) -> bool {
    glob_match(&pattern_read_as_path(pattern), path)
}

/// A rule's pattern read the way paths are; one that is no workspace path stays as written.
fn pattern_read_as_path(pattern: &str) -> String {
    normalize(pattern).unwrap_or_else(|_| pattern.trim().to_owned())
}

/// Whether `path` (normalized) is one of `excluded` (path rule patterns), or lies inside a
/// folder that is.
pub fn excluded(excluded: &[String], path: &str) -> bool {
    excluded.iter().any(|pattern| {
        let pattern = pattern_read_as_path(pattern);
        let mut at = path;
        loop {
            if glob_match(&pattern, at) {
                return true;
            }
            match at.rsplit_once('/') {
                Some((parent, _)) => at = parent,
                None => return false,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_path_is_one_path() {
        for spelling in [
            ".env",
            "./.env",
            "/workspace/.env",
            " .env",
            ".env ",
            ".//.env",
            "./././.env",
            "/workspace//./.env",
        ] {
            assert_eq!(normalize(spelling).as_deref(), Ok(".env"), "{spelling:?}");
        }
        assert_eq!(normalize("a//b/./c/").as_deref(), Ok("a/b/c"));
        for root in ["", ".", "./", "/workspace", "/workspace/"] {
            assert_eq!(normalize(root).as_deref(), Ok("."), "{root:?}");
        }
    }

    #[test]
    fn escapes_are_refused() {
        assert!(matches!(normalize("a/../.env"), Err(PathError::ParentDir(_))));
        assert!(matches!(normalize("../x"), Err(PathError::ParentDir(_))));
        assert!(matches!(normalize("/etc/passwd"), Err(PathError::Outside(_))));
        assert!(matches!(normalize("/workspacex/a"), Err(PathError::Outside(_))));
        assert!(matches!(normalize("a\0b"), Err(PathError::Nul(_))));
        assert!(matches!(normalize("//.env"), Err(PathError::Outside(_))));
    }

    #[test]
    fn a_guest_path_has_one_spelling_and_never_climbs() {
        assert_eq!(normalize_guest(" /skills//./mine/ ").as_deref(), Ok("/skills/mine"));
        assert_eq!(normalize_guest("skills"), Err(GuestPathError::Relative("skills".into())));
        assert_eq!(normalize_guest("/a/../etc"), Err(GuestPathError::ParentDir("/a/../etc".into())));
        assert_eq!(normalize_guest("/a\0b"), Err(GuestPathError::Nul("/a\0b".into())));
        assert_eq!(normalize_guest("//./"), Err(GuestPathError::Root));
        assert!(is_within("/workspace", "/workspace") && is_within("/workspace/a", "/workspace"));
        assert!(!is_within("/workspacex", "/workspace") && !is_within("/work", "/workspace"));
    }

    #[test]
    fn rules_and_exclusions_read_paths_alike() {
        assert!(rule_matches("./.env", ".env"));
        assert!(rule_matches("secrets/*", "secrets/a/b"));
        assert!(!rule_matches(".env", "a/.env"));
        let denied = vec!["secrets".to_owned(), ".env".to_owned()];
        assert!(excluded(&denied, "secrets/deep/key"));
        assert!(excluded(&denied, ".env"));
        assert!(!excluded(&denied, "src/.env.example"));
    }
}
