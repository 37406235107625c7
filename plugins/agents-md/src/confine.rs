//! Where an AGENTS.md that is a symbolic link really leads, kept inside the workspace. A
//! project often links one instructions file to another (`AGENTS.md -> CLAUDE.md`), so a link
//! is followed while it stays in the workspace; one that leads out is not, whatever the
//! sandbox would allow, since what lies outside is not the project's to say.

use std::collections::VecDeque;
use std::path::Path;

/// Most links followed while resolving one path, as the kernel's limit.
const MAX_LINKS: usize = 40;

/// The parts, relative to `root`, of where the relative path `parts` leads once every link
/// on the way is followed. A link with an absolute target (a host path, which the sandbox
/// does not map), one that climbs above `root`, or a loop is an error saying so.
pub fn resolve(root: &Path, parts: &[String]) -> Result<Vec<String>, String> {
    let mut done: Vec<String> = Vec::new();
    let mut todo: VecDeque<String> = parts.iter().cloned().collect();
    let mut links = 0;
    while let Some(part) = todo.pop_front() {
        match part.as_str() {
            "" | "." => continue,
            // Only a link's target brings `..` here: the walk's own paths have none.
            ".." => {
                if done.pop().is_none() {
                    return Err(leads_out());
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
            return Err(format!("it goes through more than {MAX_LINKS} symbolic links"));
        }
        let target = std::fs::read_link(&at).map_err(|_| leads_out())?;
        if target.is_absolute() {
            return Err(leads_out());
        }
        done.pop();
        let target = target.to_string_lossy().into_owned();
        for part in target.split('/').rev() {
            todo.push_front(part.to_owned());
        }
    }
    Ok(done)
}

fn leads_out() -> String {
    "it is a symbolic link that leads out of the workspace; it is not followed".to_owned()
}
