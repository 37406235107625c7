//! A fact about a file remembered by the file's identity and times, so that what was worked
//! out from its bytes once is not worked out again while the file is unchanged: a
//! component's hash (`hashes.rs`), an artifact's verified tag (`remembered.rs`).
//!
//! A memo holds for one path, device, inode, length, and contents' and change times to the
//! nanosecond: any write changes the change time, which no user can set back. It is sealed
//! with the cache's key and names what it is about, so whoever can write the cache folder
//! cannot make one file's memo stand for another's, or one kind of fact for another. A memo
//! is written only for a file unchanged for a while: a file changed again within its clock's
//! tick of being read would still show the times it was read with.

use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::key::KEY_LEN;

/// How long a file stays unchanged before a fact about it is remembered.
pub const SETTLED: Duration = Duration::from_secs(2);

/// What a memo says about its file, each kind in a folder of its own.
#[derive(Clone, Copy)]
pub(super) enum Fact {
    /// The component's SHA-256.
    ComponentHash,
    /// The artifact's tag, checked against its bytes under the key.
    VerifiedArtifact,
}

impl Fact {
    fn folder(self) -> &'static str {
        match self {
            Fact::ComponentHash => "hashes",
            Fact::VerifiedArtifact => "verified",
        }
    }

    /// What the memo's tag is taken over first, so one kind of memo never passes for another.
    fn purpose(self) -> &'static [u8] {
        match self {
            Fact::ComponentHash => b"component hash",
            Fact::VerifiedArtifact => b"verified artifact",
        }
    }
}

/// The memos of one kind in one cache folder, under its key.
pub(super) struct Memos<'a> {
    key: &'a [u8; KEY_LEN],
    folder: PathBuf,
    fact: Fact,
}

impl<'a> Memos<'a> {
    pub(super) fn new(key: &'a [u8; KEY_LEN], cache_dir: &Path, fact: Fact) -> Self {
        Self { key, folder: cache_dir.join(fact.folder()), fact }
    }

    /// What was remembered about `path` when it was as `stamp` describes it, if the memo's
    /// tag holds.
    pub(super) fn recall(&self, path: &Path, stamp: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.memo_path(path)).ok()?;
        let mut lines = text.lines();
        let (kept_stamp, value, kept_tag) = (lines.next()?, lines.next()?, lines.next()?);
        let kept_tag = blake3::Hash::from_hex(kept_tag).ok()?;
        // `blake3::Hash`'s equality takes the same time wherever the tags differ.
        (kept_stamp == stamp && self.tag(path, stamp, value) == kept_tag).then(|| value.to_owned())
    }

    /// Remembers `value` for `path` as `stamp` describes it, when the file, `metadata` before
    /// it was read, has settled and is still as it was.
    pub(super) fn remember(&self, path: &Path, metadata: &Metadata, value: &str) {
        let Some(stamp) = stamp(metadata) else { return };
        let settled = metadata
            .modified()
            .ok()
            .and_then(|at| at.checked_add(SETTLED))
            .is_some_and(|at| at < SystemTime::now());
        if !settled || std::fs::metadata(path).ok().and_then(|now| self::stamp(&now)).as_ref() != Some(&stamp)
        {
            return;
        }
        let sealed = format!("{stamp}\n{value}\n{}\n", self.tag(path, &stamp, value).to_hex());
        if let Err(error) = super::store(&self.folder, &self.memo_path(path), sealed.as_bytes()) {
            tracing::debug!(%error, path = %path.display(), "cannot remember what a file's bytes gave");
        }
    }

    fn memo_path(&self, path: &Path) -> PathBuf {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        self.folder.join(super::component_hash(absolute.as_os_str().as_encoded_bytes()))
    }

    fn tag(&self, path: &Path, stamp: &str, value: &str) -> blake3::Hash {
        let mut mac = blake3::Hasher::new_keyed(self.key);
        for part in
            [self.fact.purpose(), path.as_os_str().as_encoded_bytes(), stamp.as_bytes(), value.as_bytes()]
        {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        mac.finalize()
    }
}

/// The file's device, inode, length, and its last change's and its contents' times to the
/// nanosecond.
#[cfg(unix)]
pub(super) fn stamp(metadata: &Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let m = metadata;
    Some(format!(
        "{} {} {} {}.{:09} {}.{:09}",
        m.dev(),
        m.ino(),
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec()
    ))
}

/// Elsewhere nothing is remembered: the work is done at every load.
#[cfg(not(unix))]
pub(super) fn stamp(_metadata: &Metadata) -> Option<String> {
    None
}
