//! `plugins.lock`: every `oci` plugin pinned to the digests `agent-host plugin add` accepted,
//! with what its manifest declared. A load runs the locked digest, never whatever the tag
//! points at now. TOML, sorted by reference, so a diff of it reads as what changed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::declared_grants::DeclaredGrants;
use super::error::OciError;

/// What the lock says of one plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedPlugin {
    /// `REGISTRY/REPOSITORY:TAG`, as the config names it.
    pub reference: String,
    /// The digest of the artifact's manifest.
    pub manifest: String,
    /// The digest of its one layer, the component.
    pub layer: String,
    /// The contract version the component targets.
    pub contract: String,
    /// The exports it implements.
    #[serde(default)]
    pub exports: Vec<String>,
    /// Who signed it: the fingerprint of the key, or `none`.
    pub signer: String,
    /// The grants it declares.
    #[serde(default)]
    pub grants: DeclaredGrants,
}

/// The signer of an unsigned plugin, as the lock writes it.
pub const UNSIGNED: &str = "none";

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    #[serde(default, rename = "plugin")]
    pub plugins: Vec<LockedPlugin>,
}

const HEADER: &str = "# Written by `agent-host plugin add` and `plugin update`: the digest each `oci` plugin \
                      runs at,\n# and what it declared when it was accepted. Review changes to it like code.\n\n";

impl Lockfile {
    /// The lock at `path`; empty when there is none yet.
    pub fn read(path: &Path) -> Result<Self, OciError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(error) => return Err(OciError::Lock { path: path.to_path_buf(), detail: error.to_string() }),
        };
        toml::from_str(&text).map_err(|error| OciError::Lock {
            path: path.to_path_buf(),
            detail: error.to_string().trim().to_owned(),
        })
    }

    /// What the lock pins `reference` to.
    pub fn get(&self, reference: &str) -> Option<&LockedPlugin> {
        self.plugins.iter().find(|plugin| plugin.reference == reference)
    }

    /// `plugin` pinned, in place of what pinned its reference before.
    pub fn pin(&mut self, plugin: LockedPlugin) {
        self.plugins.retain(|other| other.reference != plugin.reference);
        self.plugins.push(plugin);
        self.plugins.sort_by(|a, b| a.reference.cmp(&b.reference));
    }

    /// The text of the file: sorted, stable.
    pub fn to_text(&self) -> String {
        let mut sorted = self.clone();
        sorted.plugins.sort_by(|a, b| a.reference.cmp(&b.reference));
        format!("{HEADER}{}", toml::to_string(&sorted).unwrap_or_default())
    }

    /// Written to `path` through a rename, so a reload never reads half a lock.
    pub fn write(&self, path: &Path) -> Result<(), OciError> {
        let error = |detail: String| OciError::Lock { path: path.to_path_buf(), detail };
        let dir = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let temp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| error(e.to_string()))?;
        std::fs::write(temp.path(), self.to_text()).map_err(|e| error(e.to_string()))?;
        temp.persist(path).map_err(|e| error(e.to_string()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locked(reference: &str) -> LockedPlugin {
        LockedPlugin {
            reference: reference.into(),
            manifest: "sha256:aa".into(),
            layer: "sha256:bb".into(),
            contract: "0.2.7".into(),
            exports: vec!["provide".into()],
            signer: UNSIGNED.into(),
            grants: toml::from_str("read_state = [\"lamp\"]").unwrap(),
        }
    }

    #[test]
    fn the_lock_is_sorted_and_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plugins.lock");
        assert_eq!(Lockfile::read(&path).unwrap(), Lockfile::default());
        let mut lock = Lockfile::default();
        lock.pin(locked("reg:5000/b:1"));
        lock.pin(locked("reg:5000/a:1"));
        lock.pin(LockedPlugin { layer: "sha256:cc".into(), ..locked("reg:5000/b:1") });
        lock.write(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.find("reg:5000/a:1").unwrap() < text.find("reg:5000/b:1").unwrap(), "{text}");
        assert!(text.contains("[plugin.grants]\nread_state = [\"lamp\"]"), "{text}");
        let read = Lockfile::read(&path).unwrap();
        assert_eq!(read, lock);
        assert_eq!(read.get("reg:5000/b:1").unwrap().layer, "sha256:cc");
        assert_eq!(read.to_text(), text);
    }
}
