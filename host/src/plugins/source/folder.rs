//! What building a Python or TypeScript folder shares: the toolchain and the SDK, the digest
//! that lets an unchanged folder keep its last build, and a staging folder of its own for
//! each build, whose component is moved into `build/` and recorded with its digest.

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
        Ok(self.component)
    }
}
