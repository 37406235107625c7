//! The compile cache's key: random, the deployment's own, kept beside the cache folder and
//! readable by its owner only (see the cache's module comment for why).

use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;

pub(super) const KEY_LEN: usize = blake3::KEY_LEN;

/// The key at `path`, made (random, owner-only) when there is none.
pub(super) fn load_or_create_key(path: &Path) -> anyhow::Result<[u8; KEY_LEN]> {
    match read_key(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        read => return read.with_context(|| format!("read {}", path.display())),
    }
    let mut key = [0u8; KEY_LEN];
    for chunk in key.chunks_mut(16) {
        // Version 4 UUIDs come from the operating system's random source.
        chunk.copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    }
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("create {}", parent.display()))?;
    // Written whole, then linked into place only if no other process got there first: a
    // reader never sees a key half written. Temporary files are the owner's alone (0600).
    let mut temp = tempfile::NamedTempFile::new_in(parent).context("create a temporary file")?;
    temp.write_all(&key).context("write the key")?;
    match temp.persist_noclobber(path) {
        Ok(_) => Ok(key),
        Err(error) if error.error.kind() == std::io::ErrorKind::AlreadyExists => {
            read_key(path).with_context(|| format!("read {}", path.display()))
        }
        Err(error) => Err(error.error).with_context(|| format!("create {}", path.display())),
    }
}

fn read_key(path: &Path) -> std::io::Result<[u8; KEY_LEN]> {
    let key = std::fs::read(path)?;
    key.try_into().map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not a key of {KEY_LEN} bytes"))
    })
}
