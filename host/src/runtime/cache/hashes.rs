//! A component's SHA-256 remembered by its file's identity and times, so that a warm start
//! or a reload's check of an unchanged component reads and hashes nothing (a Python
//! component is 19 MB).
//!
//! What is remembered is trusted as far as it needs to be: the hash only names the artifact
//! to load, and an artifact is code compiled from bytes with that hash (its tag says so), so
//! the code that runs is always the component whose hash is shown. The memo is sealed with
//! the cache's key all the same, binding the file's path: whoever can write the cache folder
//! cannot make the host take one component for another. A memo is written only for a file
//! unchanged for a while: a file changed again within its clock's tick of being hashed would
//! show the times it was hashed with.

use std::fs::Metadata;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::key::{KEY_LEN, load_or_create_key};

/// How long a file stays unchanged before its hash is remembered.
const SETTLED: Duration = Duration::from_secs(2);

/// A component's hash, and its bytes when they had to be read for it.
pub struct Identified {
    pub hash: String,
    pub bytes: Option<Vec<u8>>,
}

/// The SHA-256 of the component at `path`, remembered under `cache_dir` (see the module).
pub fn identify(path: &Path, cache_dir: &Path) -> std::io::Result<Identified> {
    let metadata = std::fs::metadata(path)?;
    let key = load_or_create_key(&crate::config::compile_cache_key_path(cache_dir)).ok();
    let stamp = stamp(&metadata);
    let memo = memo_path(cache_dir, path);
    if let (Some(key), Some(stamp)) = (&key, &stamp)
        && let Some(hash) = remembered(key, path, stamp, &memo)
    {
        return Ok(Identified { hash, bytes: None });
    }
    let bytes = std::fs::read(path)?;
    let hash = super::component_hash(&bytes);
    let settled = metadata
        .modified()
        .ok()
        .and_then(|at| at.checked_add(SETTLED))
        .is_some_and(|at| at < SystemTime::now());
    if let (Some(key), Some(stamp), true) = (&key, &stamp, settled)
        && std::fs::metadata(path).ok().and_then(|now| self::stamp(&now)).as_ref() == Some(stamp)
    {
        let sealed = format!("{stamp}\n{hash}\n{}\n", tag(key, path, stamp, &hash).to_hex());
        if let Err(error) = super::store(&cache_dir.join(MEMOS), &memo, sealed.as_bytes()) {
            tracing::debug!(%error, path = %path.display(), "cannot remember a component's hash");
        }
    }
    Ok(Identified { hash, bytes: Some(bytes) })
}

/// The folder of the cache the memos are kept in.
const MEMOS: &str = "hashes";

fn memo_path(cache_dir: &Path, path: &Path) -> std::path::PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let name = super::component_hash(absolute.as_os_str().as_encoded_bytes());
    cache_dir.join(MEMOS).join(name)
}

/// The hash the memo at `memo` gives for `path` as `stamp` describes it, if its tag holds.
fn remembered(key: &[u8; KEY_LEN], path: &Path, stamp: &str, memo: &Path) -> Option<String> {
    let text = std::fs::read_to_string(memo).ok()?;
    let mut lines = text.lines();
    let (kept_stamp, hash, kept_tag) = (lines.next()?, lines.next()?, lines.next()?);
    let kept_tag = blake3::Hash::from_hex(kept_tag).ok()?;
    // `blake3::Hash`'s equality takes the same time wherever the tags differ.
    (kept_stamp == stamp && tag(key, path, stamp, hash) == kept_tag).then(|| hash.to_owned())
}

fn tag(key: &[u8; KEY_LEN], path: &Path, stamp: &str, hash: &str) -> blake3::Hash {
    let mut mac = blake3::Hasher::new_keyed(key);
    for part in
        [b"component hash".as_slice(), path.as_os_str().as_encoded_bytes(), stamp.as_bytes(), hash.as_bytes()]
    {
        mac.update(&(part.len() as u64).to_le_bytes());
        mac.update(part);
    }
    mac.finalize()
}

/// The file's device, inode, length, and its last change's and its contents' times to the
/// nanosecond: any write changes the change time, which no user can set back.
#[cfg(unix)]
fn stamp(metadata: &Metadata) -> Option<String> {
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

/// Elsewhere nothing is remembered: the hash is taken at every load.
#[cfg(not(unix))]
fn stamp(_metadata: &Metadata) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::identify;

    fn settle(path: &std::path::Path) {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
    }

    #[test]
    fn an_unchanged_component_is_hashed_once_and_a_changed_one_again() {
        let dir = tempfile::tempdir().unwrap();
        let (component, cache) = (dir.path().join("plugin.wasm"), dir.path().join("cache"));
        std::fs::write(&component, b"first").unwrap();
        let fresh = identify(&component, &cache).unwrap();
        assert!(fresh.bytes.is_some());
        let again = identify(&component, &cache).unwrap();
        assert!(again.bytes.is_some(), "a file just written is not remembered yet");

        settle(&component);
        let read = identify(&component, &cache).unwrap();
        assert_eq!(read.bytes.as_deref(), Some(b"first".as_slice()));
        let remembered = identify(&component, &cache).unwrap();
        assert_eq!((remembered.hash.as_str(), remembered.bytes), (read.hash.as_str(), None));
        // sha256("first"), worked out apart from the code under test.
        assert_eq!(read.hash, "a7937b64b8caa58f03721bb6bacf5c78cb235febe0e70b1b84cd99541461a08e");

        std::fs::write(&component, b"other").unwrap();
        settle(&component);
        let changed = identify(&component, &cache).unwrap();
        assert_eq!(changed.bytes.as_deref(), Some(b"other".as_slice()), "read again");
        assert_ne!(changed.hash, read.hash);
    }

    #[test]
    fn a_memo_that_was_altered_or_is_another_files_is_not_believed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let (one, two) = (dir.path().join("one.wasm"), dir.path().join("two.wasm"));
        for (path, bytes) in [(&one, b"one"), (&two, b"two")] {
            std::fs::write(path, bytes).unwrap();
            settle(path);
            identify(path, &cache).unwrap();
            assert!(identify(path, &cache).unwrap().bytes.is_none(), "remembered");
        }
        let (one_memo, two_memo) = (super::memo_path(&cache, &one), super::memo_path(&cache, &two));
        let one_hash = identify(&one, &cache).unwrap().hash;
        let two_hash = identify(&two, &cache).unwrap().hash;

        // Another file's hash written into the memo, its tag left as it was.
        let text = std::fs::read_to_string(&one_memo).unwrap();
        std::fs::write(&one_memo, text.replace(&one_hash, &two_hash)).unwrap();
        let altered = identify(&one, &cache).unwrap();
        assert_eq!((altered.hash.as_str(), altered.bytes.is_some()), (one_hash.as_str(), true));

        // Another file's whole memo in its place.
        std::fs::copy(&two_memo, &one_memo).unwrap();
        let swapped = identify(&one, &cache).unwrap();
        assert_eq!((swapped.hash.as_str(), swapped.bytes.is_some()), (one_hash.as_str(), true));
    }
}
