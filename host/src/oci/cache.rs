//! Pulled components kept by digest under `[runtime] cache_dir` (`oci/sha256-HEX.wasm`), so a
//! host whose registry is down still starts from what it fetched before. A file is written
//! through a rename and hashed again whenever it is read: a cache entry is trusted no more
//! than the registry was.

use std::path::{Path, PathBuf};

use super::artifact::sha256_digest;
use super::error::OciError;

/// The folder of pulled components.
pub struct ComponentCache {
    dir: PathBuf,
}

impl ComponentCache {
    /// The cache under `cache_dir` (`[runtime] cache_dir`, resolved).
    pub fn under(cache_dir: &Path) -> Self {
        Self { dir: cache_dir.join("oci") }
    }

    /// Where the blob `digest` (`sha256:HEX`) is kept, with `extension`.
    pub fn path_of(&self, digest: &str, extension: &str) -> PathBuf {
        self.dir.join(format!("{}.{extension}", digest.replace(':', "-")))
    }

    /// The cached component `digest`, when there is one whose bytes still hash to it. One that
    /// does not is removed, to be fetched again.
    pub fn component(&self, digest: &str) -> Option<PathBuf> {
        let path = self.path_of(digest, "wasm");
        let bytes = std::fs::read(&path).ok()?;
        if sha256_digest(&bytes) == digest {
            return Some(path);
        }
        tracing::warn!(path = %path.display(), digest, "a cached component no longer matches its digest; fetching it again");
        let _ = std::fs::remove_file(&path);
        None
    }

    /// `bytes` (already checked against `digest`) kept as the component `digest`.
    pub fn keep_component(&self, digest: &str, bytes: &[u8]) -> Result<PathBuf, OciError> {
        self.keep(&self.path_of(digest, "wasm"), bytes)
    }

    /// `bytes` written at `path` through a rename.
    pub fn keep(&self, path: &Path, bytes: &[u8]) -> Result<PathBuf, OciError> {
        let error = |detail: String| OciError::Cache { path: self.dir.clone(), detail };
        std::fs::create_dir_all(&self.dir).map_err(|e| error(e.to_string()))?;
        let temp = tempfile::NamedTempFile::new_in(&self.dir).map_err(|e| error(e.to_string()))?;
        std::fs::write(temp.path(), bytes).map_err(|e| error(e.to_string()))?;
        temp.persist(path).map_err(|e| error(e.to_string()))?;
        Ok(path.to_path_buf())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_component_is_read_only_while_it_hashes_to_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ComponentCache::under(dir.path());
        let digest = sha256_digest(b"component");
        assert_eq!(cache.component(&digest), None);
        let path = cache.keep_component(&digest, b"component").unwrap();
        assert!(path.ends_with(format!("oci/{}.wasm", digest.replace(':', "-"))));
        assert_eq!(cache.component(&digest), Some(path.clone()));
        std::fs::write(&path, b"altered").unwrap();
        assert_eq!(cache.component(&digest), None);
        assert!(!path.exists());
    }
}
