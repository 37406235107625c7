//! A component's SHA-256 remembered by its file's identity and times (`memo.rs`), so that a
//! warm start or a reload's check of an unchanged component reads and hashes nothing (a
//! Python component is 19 MB).
//!
//! What is remembered is trusted as far as it needs to be: the hash only names the artifact
//! to load, and an artifact is code compiled from bytes with that hash (its tag says so), so
//! the code that runs is always the component whose hash is shown. The memo is sealed with
//! the cache's key all the same: whoever can write the cache folder cannot make the host
//! take one component for another.

use std::path::Path;

use super::key::load_or_create_key;
use super::memo::{Fact, Memos, stamp};

/// A component's hash, and its bytes when they had to be read for it.
pub struct Identified {
    pub hash: String,
    pub bytes: Option<Vec<u8>>,
}

/// The SHA-256 of the component at `path`, remembered under `cache_dir` (see the module).
pub fn identify(path: &Path, cache_dir: &Path) -> std::io::Result<Identified> {
    let metadata = std::fs::metadata(path)?;
    let key = load_or_create_key(&crate::config::compile_cache_key_path(cache_dir)).ok();
    let memos = key.as_ref().map(|key| Memos::new(key, cache_dir, Fact::ComponentHash));
    if let (Some(memos), Some(stamp)) = (&memos, stamp(&metadata))
        && let Some(hash) = memos.recall(path, &stamp)
    {
        return Ok(Identified { hash, bytes: None });
    }
    let bytes = std::fs::read(path)?;
    let hash = super::component_hash(&bytes);
    if let Some(memos) = &memos {
        memos.remember(path, &metadata, &hash);
    }
    Ok(Identified { hash, bytes: Some(bytes) })
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
        let memo_path = |path: &std::path::Path| {
            let absolute = std::path::absolute(path).unwrap();
            cache
                .join("hashes")
                .join(crate::runtime::cache::component_hash(absolute.as_os_str().as_encoded_bytes()))
        };
        let (one_memo, two_memo) = (memo_path(&one), memo_path(&two));
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
