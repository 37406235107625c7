//! Files of the read-only system folders that only their owner may read.
//!
//! Inside the sandbox the program runs as a user of its own, but when the host runs as root
//! that user is still uid 0 to the file-permission checks of the folders bound in from the
//! host: `/etc/shadow` (mode 0640, owner root) would be readable. So every entry of `/etc`
//! that is not world-readable is covered: a file by `/dev/null` on a mount that allows no
//! device (so reading it fails), a folder by an empty tmpfs with mode 000.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One entry to cover.
#[derive(Debug, Clone)]
pub(super) struct Mask {
    pub path: PathBuf,
    pub dir: bool,
}

/// The entries of `/etc` to cover, found once per process.
pub(super) fn etc_masks() -> &'static [Mask] {
    static MASKS: OnceLock<Vec<Mask>> = OnceLock::new();
    MASKS.get_or_init(|| {
        let mut masks = Vec::new();
        scan(Path::new("/etc"), &mut masks);
        masks
    })
}

fn scan(dir: &Path, masks: &mut Vec<Mask>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if meta.file_type().is_symlink() {
            // What it points to is checked where it lives (if that is in /etc).
            continue;
        }
        let mode = meta.permissions().mode();
        if meta.is_dir() {
            // A folder others cannot both list and enter is covered whole.
            if mode & 0o005 != 0o005 {
                masks.push(Mask { path, dir: true });
            } else {
                scan(&path, masks);
            }
        } else if mode & 0o004 == 0 {
            masks.push(Mask { path, dir: false });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_that_is_not_world_readable_is_covered_whole() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        let closed = dir.path().join("closed");
        std::fs::create_dir(&open).unwrap();
        std::fs::create_dir(&closed).unwrap();
        std::fs::write(open.join("public"), "x").unwrap();
        std::fs::write(open.join("secret"), "x").unwrap();
        std::fs::write(closed.join("inside"), "x").unwrap();
        std::fs::set_permissions(open.join("secret"), std::fs::Permissions::from_mode(0o640)).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o750)).unwrap();
        let mut masks = Vec::new();
        scan(dir.path(), &mut masks);
        let mut found: Vec<(String, bool)> = masks
            .iter()
            .map(|m| (m.path.strip_prefix(dir.path()).unwrap().display().to_string(), m.dir))
            .collect();
        found.sort();
        assert_eq!(found, [("closed".to_owned(), true), ("open/secret".to_owned(), false)]);
    }
}
