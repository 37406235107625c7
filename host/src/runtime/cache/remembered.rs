//! An artifact that verified once, mapped straight from its file while the file is unchanged
//! (Linux). Copying a Python component's 36 MB artifact into sealed memory and checking its
//! tag is most of a warm start; a file that has not changed since its tag verified needs
//! neither, provided nothing can change it while it is mapped.
//!
//! What vouches for the file is a memo (`memo.rs`, sealed with the cache's key) of its
//! identity and times when it verified, and of the tag it verified with: any write since
//! changes its change time, and the memo no longer holds. What keeps it unchanged while
//! mapped is who can write it: the fast way is taken only for a file, in a folder, owned by
//! the host's own user and writable by no one else. Every process the host starts (tools,
//! plugin builds, MCP servers) runs in a sandbox that cannot write the cache folder, so what
//! is left is the user's own processes outside it, and root, which could as well replace the
//! host's binary. Anything else — a memo missing, altered or another file's, a file changed,
//! a folder others can write — takes the sealed copy and its check (`sealed.rs`).

use std::fs::{File, Metadata};
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use wasmtime::Engine;
use wasmtime::component::Component;

use super::key::KEY_LEN;
use super::memo::{Fact, Memos, stamp};
use super::sealed::{Verified, stated_tag};

/// The component in the artifact at `path` when a memo says its tag verified and the file
/// is as it was then; `None` sends the caller to the check.
pub(super) fn load(engine: &Engine, key: &[u8; KEY_LEN], cache_dir: &Path, path: &Path) -> Option<Component> {
    let artifact = File::open(path).ok()?;
    let metadata = artifact.metadata().ok()?;
    let folder = std::fs::metadata(path.parent()?).ok()?;
    if !writable_by_owner_alone(&metadata) || !writable_by_owner_alone(&folder) {
        return None;
    }
    let stamp = stamp(&metadata)?;
    let tag = stated_tag(&artifact, &metadata).ok()?;
    let memos = Memos::new(key, cache_dir, Fact::VerifiedArtifact);
    if memos.recall(path, &stamp)? != tag.to_hex().as_str() {
        return None;
    }
    // wasmtime maps the file this descriptor holds open, the one whose times were checked.
    let mapped = format!("/proc/self/fd/{}", artifact.as_raw_fd());
    // SAFETY: as `super::deserialize`: the file's bytes verified under the deployment's key
    // (the memo says so, for this file as it is now), and no process but the owner's own
    // outside every sandbox, or root, can write it while it is mapped (see the module).
    #[allow(unsafe_code)]
    let loaded = unsafe { Component::deserialize_file(engine, &mapped) };
    loaded
        .inspect_err(|error| tracing::debug!(%error, "cannot map a verified artifact; checking it again"))
        .ok()
}

/// Remembers that the artifact at `path` verified, so the next load maps it from its file.
pub(super) fn remember(key: &[u8; KEY_LEN], cache_dir: &Path, path: &Path, verified: &Verified) {
    Memos::new(key, cache_dir, Fact::VerifiedArtifact).remember(
        path,
        &verified.metadata,
        &verified.tag.to_hex(),
    );
}

/// Whether only the host's own user can write the file or folder `metadata` describes.
fn writable_by_owner_alone(metadata: &Metadata) -> bool {
    // SAFETY: geteuid cannot fail and touches no memory of ours.
    #[allow(unsafe_code)]
    let user = unsafe { libc::geteuid() };
    metadata.uid() == user && metadata.mode() & 0o022 == 0
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;
    use std::time::{Duration, SystemTime};

    use wasmtime::{Config, Engine};

    use super::load;
    use crate::runtime::cache::key::KEY_LEN;

    /// The smallest component: the preamble of the component binary format, nothing else.
    const EMPTY_COMPONENT: &[u8] = &[0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

    /// An artifact of `EMPTY_COMPONENT` under `key` at `cache/a.cwasm`, written long enough
    /// ago that what verifies about it is remembered.
    fn artifact(engine: &Engine, key: &[u8; KEY_LEN], cache: &std::path::Path) -> std::path::PathBuf {
        let compiled = engine.precompile_component(EMPTY_COMPONENT).unwrap();
        std::fs::create_dir_all(cache).unwrap();
        std::fs::set_permissions(cache, std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = cache.join("a.cwasm");
        std::fs::write(&path, crate::runtime::cache::seal(key, "a.cwasm", &compiled)).unwrap();
        settle(&path);
        path
    }

    fn settle(path: &std::path::Path) {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
    }

    /// Loads through the cache's own order: the remembered way, else the check (which
    /// remembers). Whether the remembered way was taken.
    fn mapped_without_a_check(engine: &Engine, key: &[u8; KEY_LEN], cache: &std::path::Path) -> bool {
        let path = cache.join("a.cwasm");
        if load(engine, key, cache, &path).is_some() {
            return true;
        }
        let verified = super::super::sealed::load(engine, key, "a.cwasm", &path).unwrap().unwrap();
        super::remember(key, cache, &path, &verified);
        false
    }

    #[test]
    fn an_artifact_that_verified_is_mapped_from_its_file_until_it_changes() {
        let engine = Engine::new(Config::new().wasm_component_model(true)).unwrap();
        let key = [7u8; KEY_LEN];
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let path = artifact(&engine, &key, &cache);
        assert!(!mapped_without_a_check(&engine, &key, &cache), "never verified yet");
        assert!(mapped_without_a_check(&engine, &key, &cache), "verified, unchanged");
        assert!(load(&engine, &[8u8; KEY_LEN], &cache, &path).is_none(), "another key's memo does not hold");

        // Written again with the very same bytes: its times changed, so it is checked again.
        std::fs::write(&path, std::fs::read(&path).unwrap()).unwrap();
        settle(&path);
        assert!(load(&engine, &key, &cache, &path).is_none(), "changed since it verified");
        assert!(!mapped_without_a_check(&engine, &key, &cache));
        assert!(mapped_without_a_check(&engine, &key, &cache), "verified again");

        // A byte changed, and the file's times put back as they were: the change time moved.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[100] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        settle(&path);
        assert!(load(&engine, &key, &cache, &path).is_none(), "a byte changed");
        let error = super::super::sealed::load(&engine, &key, "a.cwasm", &path).err().unwrap();
        assert!(error.to_string().contains("tag does not match"), "{error}");
    }

    #[test]
    fn an_artifact_others_can_write_is_always_checked() {
        let engine = Engine::new(Config::new().wasm_component_model(true)).unwrap();
        let key = [7u8; KEY_LEN];
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let path = artifact(&engine, &key, &cache);
        mapped_without_a_check(&engine, &key, &cache);
        assert!(load(&engine, &key, &cache, &path).is_some(), "the control: remembered");

        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(load(&engine, &key, &cache, &path).is_none(), "a folder anyone can write");
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o620)).unwrap();
        // Its change time moved with its mode; remembered again, then its mode checked alone.
        mapped_without_a_check(&engine, &key, &cache);
        assert!(load(&engine, &key, &cache, &path).is_none(), "a file its group can write");
    }
}
