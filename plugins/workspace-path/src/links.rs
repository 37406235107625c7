//! Where a relative path inside a folder really leads once every symbolic link on the way is
//! followed: what keeps a plugin's reads inside one folder of its grants (a skill's, the
//! workspace), which the sandbox, granting the whole folder above, cannot know.

use std::collections::VecDeque;
use std::path::Path;

/// Most links followed while resolving one path, as the kernel's limit.
pub const MAX_LINKS: usize = 40;

/// Why a path was not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkEscape {
    /// It goes through the link `via` (relative to the folder), whose target is absolute (a
    /// host path the sandbox does not map) or climbs out of the folder.
    LeadsOut { via: String },
    /// More than [`MAX_LINKS`] links: a loop, most likely.
    TooManyLinks,
}

/// The parts, relative to `root`, of where the relative path `parts` leads. `..` may come
/// only from a link's target; a `..` of the caller's own is the caller's to refuse first.
pub fn resolve_links(root: &Path, parts: &[String]) -> Result<Vec<String>, LinkEscape> {
    let mut done: Vec<String> = Vec::new();
    let mut todo: VecDeque<String> = parts.iter().cloned().collect();
    let mut links = 0;
    // The last link followed: a `..` that climbs out of `root` came from its target.
    let mut via = String::new();
    while let Some(part) = todo.pop_front() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                if done.pop().is_none() {
                    return Err(LinkEscape::LeadsOut { via });
                }
                continue;
            }
            _ => {}
        }
        done.push(part);
        let at = root.join(done.join("/"));
        let Ok(meta) = std::fs::symlink_metadata(&at) else { continue };
        if !meta.file_type().is_symlink() {
            continue;
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(LinkEscape::TooManyLinks);
        }
        via = done.join("/");
        let Ok(target) = std::fs::read_link(&at) else { return Err(LinkEscape::LeadsOut { via }) };
        if target.is_absolute() {
            return Err(LinkEscape::LeadsOut { via });
        }
        done.pop();
        let target = target.to_string_lossy().into_owned();
        for part in target.split('/').rev() {
            todo.push_front(part.to_owned());
        }
    }
    Ok(done)
}
