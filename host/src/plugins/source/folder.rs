//! What building a Python or TypeScript folder shares: the toolchain and the SDK, the digest
//! that lets an unchanged folder keep its last build, and a staging folder of its own for
//! each build, whose component is moved into `build/` and recorded with its digest.
//!
//! Every build is also kept beside the toolchains, by its digest (`builds/DIGEST.wasm`): a
//! folder with the same files, SDK and toolchain as one built before on this machine — a
//! copy, a clone, a second checkout — takes that component instead of building again. The
//! digest covers everything the build reads, so a kept component is what the build would
//! make; the folder is the toolchains' own, which no plugin build can write.

use std::path::{Path, PathBuf};

use super::sdk::Sdk;
use super::toolchain::Toolchain;
use super::{Progress, sdk, stamp, toolchain};

/// A build about to run: what it builds with, and where.
pub(super) struct FolderBuild {
    pub toolchain: Toolchain,
    pub sdk: Sdk,
    /// Where this build writes (removed when the build is over, however it ends). Each
    /// build has its own, so two hosts building one folder at once do not meet.
    pub staging: tempfile::TempDir,
    component: PathBuf,
    digest: String,
}

/// The last build of `dir`, when nothing it depends on changed; else a build to run.
pub(super) enum Prepared {
    Kept(PathBuf),
    Build(FolderBuild),
}

/// Prepares the build of the `language` folder `dir` into `build/FILE`.
pub(super) fn prepare(
    dir: &Path,
    language: &str,
    file: &str,
    progress: Progress<'_>,
) -> Result<Prepared, String> {
    let toolchain = toolchain::ensure(language, progress)?;
    let sdk = sdk::unpack()?;
    let digest = stamp::digest(dir, &[&sdk.digest, &toolchain.stamp])?;
    let output = dir.join("build");
    let component = output.join(file);
    if let Some(kept) = stamp::reusable(&component, &digest) {
        return Ok(Prepared::Kept(kept));
    }
    let io = |error: std::io::Error| format!("cannot write in {}: {error}", output.display());
    std::fs::create_dir_all(&output).map_err(io)?;
    if let Some(kept) = kept_build(&digest, &output, &component)? {
        progress(&format!(
            "{} holds what a folder built before held: its component is reused",
            dir.display()
        ));
        return Ok(Prepared::Kept(kept));
    }
    let staging = tempfile::tempdir_in(&output).map_err(io)?;
    Ok(Prepared::Build(FolderBuild { toolchain, sdk, staging, component, digest }))
}

impl FolderBuild {
    /// A file of the staging folder.
    pub fn staged(&self, name: &str) -> PathBuf {
        self.staging.path().join(name)
    }

    /// Writes `text` to the staging folder's `name`.
    pub fn write(&self, name: &str, text: &str) -> Result<PathBuf, String> {
        let path = self.staged(name);
        std::fs::write(&path, text).map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        Ok(path)
    }

    /// Moves the component `built` into place and records what it was built from.
    pub fn finish(self, built: &Path) -> Result<PathBuf, String> {
        std::fs::rename(built, &self.component)
            .map_err(|error| format!("cannot move the component into place: {error}"))?;
        stamp::record(&self.component, &self.digest)?;
        keep_build(&self.component, &self.digest);
        Ok(self.component)
    }
}

/// How many builds are kept: the most recently used (a Python component is some 20 MB; a
/// test suite that builds every kind of folder needs a few dozen).
const KEPT_BUILDS: usize = 64;

/// Where the build with `digest` is kept for every folder of this machine.
fn kept_path(digest: &str) -> PathBuf {
    toolchain::home().join("builds").join(format!("{digest}.wasm"))
}

/// The kept build with `digest`, copied to `component` (in `output`) and recorded there.
fn kept_build(digest: &str, output: &Path, component: &Path) -> Result<Option<PathBuf>, String> {
    let kept = kept_path(digest);
    if !kept.is_file() {
        return Ok(None);
    }
    // Through a rename, so another host loading this folder never reads half a copy.
    let copy = tempfile::NamedTempFile::new_in(output).map_err(|error| error.to_string())?;
    std::fs::copy(&kept, copy.path()).map_err(|error| format!("cannot copy {}: {error}", kept.display()))?;
    copy.persist(component).map_err(|error| error.to_string())?;
    stamp::record(component, digest)?;
    // Used now: the last to go when the kept builds are pruned.
    let _ = std::fs::File::open(&kept).and_then(|file| file.set_modified(std::time::SystemTime::now()));
    Ok(Some(component.to_path_buf()))
}

/// Keeps `component`, built from a folder with `digest`, for the next folder like it; a
/// failure to keep it only costs that folder a build.
fn keep_build(component: &Path, digest: &str) {
    let kept = kept_path(digest);
    let Some(folder) = kept.parent() else { return };
    let stored = std::fs::create_dir_all(folder)
        .and_then(|()| tempfile::NamedTempFile::new_in(folder))
        .and_then(|copy| std::fs::copy(component, copy.path()).map(|_| copy))
        .and_then(|copy| copy.persist(&kept).map_err(|error| error.error));
    if let Err(error) = stored {
        tracing::debug!(%error, kept = %kept.display(), "a plugin folder's build was not kept");
    }
    prune(folder);
}

/// Removes all but the [`KEPT_BUILDS`] most recently used builds of `folder`.
fn prune(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    let mut builds: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "wasm"))
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .collect();
    builds.sort_by_key(|(used, _)| std::cmp::Reverse(*used));
    for (_, old) in builds.into_iter().skip(KEPT_BUILDS) {
        let _ = std::fs::remove_file(old);
    }
}
