//! Finding the folders of the workspace that hold an AGENTS.md, nearest the root first. The
//! walk leaves out what is no project's own writing (`node_modules`, `target`) and hidden
//! folders (`.git`, an editor's), never enters a folder through a symbolic link (a linked
//! folder's files are found where it really lies, if that is in the workspace, and a link
//! out of it leads nowhere), and stops at a count so a huge tree cannot stall a call.

use std::collections::VecDeque;
use std::path::Path;

use agent_host_sdk::log;

/// The file the walk looks for, spelt as the convention spells it.
pub const FILE_NAME: &str = "AGENTS.md";

/// The most folders one walk reads.
pub const MAX_FOLDERS: usize = 2048;

/// Folders that hold what tools made or fetched, not what the project wrote.
const SKIPPED: &[&str] = &["node_modules", "target"];

/// What a walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk {
    /// The folders holding an AGENTS.md, relative to the workspace (`""` for its root), by
    /// depth, then by path, folder by folder.
    pub folders: Vec<String>,
    /// Whether the walk stopped at [`MAX_FOLDERS`] with folders left.
    pub stopped: bool,
}

/// The folders under `root`, down to `max_depth` folders below it, that hold an AGENTS.md
/// (of whatever kind: the reader says what is wrong with one). The error says why `root`
/// itself cannot be read.
pub fn walk(root: &Path, max_depth: u32) -> Result<Walk, String> {
    let mut folders = Vec::new();
    let mut queue = VecDeque::from([(String::new(), 0)]);
    let mut read = 0;
    while let Some((folder, depth)) = queue.pop_front() {
        if read == MAX_FOLDERS {
            return Ok(Walk { folders: ordered(folders), stopped: true });
        }
        read += 1;
        let entries = match std::fs::read_dir(root.join(&folder)) {
            Ok(entries) => entries,
            Err(error) if folder.is_empty() => {
                return Err(format!(
                    "the workspace cannot be read ({error}); grant it to this plugin under [plugin.grants.dirs], \
                     at the guest path `workspace` names"
                ));
            }
            Err(error) => {
                log::debug(&format!("{folder} is not walked: {error}"));
                continue;
            }
        };
        let mut entries: Vec<(String, bool)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                // A name that is not UTF-8 cannot be shown to the model; its folder is left.
                let name = entry.file_name().into_string().ok()?;
                // The entry's own kind: a link to a folder is a link, not a folder.
                let is_dir = entry.file_type().ok()?.is_dir();
                Some((name, is_dir))
            })
            .collect();
        entries.sort();
        for (name, is_dir) in entries {
            if name == FILE_NAME {
                folders.push(folder.clone());
            } else if is_dir && depth < max_depth && walked_into(&name) {
                let below = if folder.is_empty() { name } else { format!("{folder}/{name}") };
                queue.push_back((below, depth + 1));
            }
        }
    }
    Ok(Walk { folders: ordered(folders), stopped: false })
}

fn walked_into(name: &str) -> bool {
    !name.starts_with('.') && !SKIPPED.contains(&name)
}

/// How many folders below the workspace `folder` lies.
pub fn depth(folder: &str) -> usize {
    if folder.is_empty() { 0 } else { folder.split('/').count() }
}

/// By depth, then folder by folder by name: the walk goes by depth, but its order within one
/// depth follows the parents', which is not the order of the paths' names.
fn ordered(mut folders: Vec<String>) -> Vec<String> {
    folders.sort_by(|a, b| depth(a).cmp(&depth(b)).then_with(|| a.split('/').cmp(b.split('/'))));
    folders
}
