//! What the watched files hold, as digests: an event on a file whose contents are unchanged
//! (a `touch`, a save of the same text, a build that rewrote a file as it was) starts no
//! reload, and a change that was rejected is not tried again until the file changes again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::targets::Targets;

/// A digest of each watched file and plugin folder; `None` for one that cannot be read (a
/// file removed, or renamed away mid-save).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Fingerprint(BTreeMap<PathBuf, Option<String>>);

impl Fingerprint {
    /// Read now.
    pub fn of(targets: &Targets) -> Self {
        Self(inputs(targets).map(|(path, folder)| (path.to_path_buf(), digest(path, folder))).collect())
    }

    /// This fingerprint for what `targets` names now: inputs it no longer names dropped, and
    /// new ones (a plugin the reloaded config added) read now. An input kept keeps the digest
    /// it had, so a change made while a reload ran is still a change to the next look.
    pub fn follow(&mut self, targets: &Targets) {
        let named: BTreeMap<&Path, bool> = inputs(targets).collect();
        self.0.retain(|path, _| named.contains_key(path.as_path()));
        for (path, folder) in named {
            if !self.0.contains_key(path) {
                self.0.insert(path.to_path_buf(), digest(path, folder));
            }
        }
    }
}

/// Every input of `targets`, and whether it is a plugin folder.
fn inputs(targets: &Targets) -> impl Iterator<Item = (&Path, bool)> {
    let files = targets.files.iter().map(|file| (file.as_path(), false));
    files.chain(targets.folders.iter().map(|folder| (folder.as_path(), true)))
}

fn digest(path: &Path, folder: bool) -> Option<String> {
    if folder {
        crate::plugins::source_digest(path).ok()
    } else {
        std::fs::read(path).ok().map(|bytes| hex::encode(Sha256::digest(bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn deployment() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("py")).unwrap();
        std::fs::write(dir.path().join("py/pyproject.toml"), "[project]\nname = \"py\"\n").unwrap();
        std::fs::write(dir.path().join("py/plugin.py"), "x = 1\n").unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            "[model]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n[[plugin]]\npath = \"py\"\n",
        )
        .unwrap();
        (dir, config)
    }

    fn targets(config: &Path) -> Targets {
        Targets::of(&Config::load(config).unwrap())
    }

    #[test]
    fn the_same_contents_give_the_same_fingerprint_and_an_edit_another() {
        let (dir, config) = deployment();
        let first = Fingerprint::of(&targets(&config));
        // Written again as it was, and build outputs written: nothing changed.
        std::fs::write(dir.path().join("py/plugin.py"), "x = 1\n").unwrap();
        std::fs::create_dir_all(dir.path().join("py/build")).unwrap();
        std::fs::write(dir.path().join("py/build/py.wasm"), b"built").unwrap();
        assert_eq!(Fingerprint::of(&targets(&config)), first);

        std::fs::write(dir.path().join("py/plugin.py"), "x = 2\n").unwrap();
        assert_ne!(Fingerprint::of(&targets(&config)), first);
        std::fs::write(dir.path().join("py/plugin.py"), "x = 1\n").unwrap();
        std::fs::remove_file(&config).unwrap();
        assert_ne!(Fingerprint::of(&targets_without_config(dir.path())), first, "a file gone is a change");
    }

    /// The targets of the deployment in `dir` as the watcher last knew them, its config gone.
    fn targets_without_config(dir: &Path) -> Targets {
        let mut kept = Targets::default();
        kept.files.insert(std::fs::canonicalize(dir).unwrap().join("config.toml"));
        kept.folders.insert(std::fs::canonicalize(dir.join("py")).unwrap());
        kept
    }

    #[test]
    fn following_a_reload_keeps_what_was_known_and_reads_what_is_new() {
        let (dir, config) = deployment();
        let mut seen = Fingerprint::of(&targets(&config));
        // Edited while a reload ran: the fingerprint followed afterwards still differs.
        std::fs::write(dir.path().join("py/plugin.py"), "x = 3\n").unwrap();
        let mut followed = seen.clone();
        followed.follow(&targets(&config));
        assert_eq!(followed, seen, "what was known is kept as it was");
        assert_ne!(Fingerprint::of(&targets(&config)), followed);

        // A plugin the config now names is read; one it no longer names is dropped.
        std::fs::create_dir_all(dir.path().join("ts")).unwrap();
        std::fs::write(dir.path().join("ts/package.json"), "{\"name\": \"ts\"}").unwrap();
        std::fs::write(
            &config,
            "[model]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n[[plugin]]\npath = \"ts\"\n",
        )
        .unwrap();
        seen.follow(&targets(&config));
        let paths: Vec<String> =
            seen.0.keys().map(|path| path.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(paths, ["config.toml", "ts"]);
        assert!(seen.0.values().all(Option::is_some));
    }
}
