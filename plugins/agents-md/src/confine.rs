//! Where an AGENTS.md that is a symbolic link really leads, kept inside the workspace. A
//! project often links one instructions file to another (`AGENTS.md -> CLAUDE.md`), so a link
//! is followed while it stays in the workspace; one that leads out is not, whatever the
//! sandbox would allow, since what lies outside is not the project's to say.

use std::path::Path;

use workspace_path::{LinkEscape, MAX_LINKS, resolve_links};

/// The parts, relative to `root`, of where the relative path `parts` leads once every link
/// on the way is followed. A link with an absolute target (a host path, which the sandbox
/// does not map), one that climbs above `root`, or a loop is an error saying so.
pub fn resolve(root: &Path, parts: &[String]) -> Result<Vec<String>, String> {
    resolve_links(root, parts).map_err(|escape| match escape {
        LinkEscape::LeadsOut { .. } => {
            "it is a symbolic link that leads out of the workspace; it is not followed".to_owned()
        }
        LinkEscape::TooManyLinks => format!("it goes through more than {MAX_LINKS} symbolic links"),
    })
}
