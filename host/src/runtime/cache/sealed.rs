//! An artifact loaded through a sealed copy in memory (Linux): its bytes are read once, in
//! chunks that are checked against its tag as they are copied into a `memfd`, which is then
//! sealed against any change and handed to wasmtime as the file it maps. So the code that
//! runs is the code that verified — nobody can write the copy, whatever they do to the
//! artifact on disk after — and wasmtime maps the component's memory images straight from
//! the copy instead of copying them again into images of its own, as it does for bytes it
//! is given. Where a sealed copy cannot be made or mapped (another system, no `/proc`,
//! memory execution forbidden), the caller reads the artifact into memory as before.

use std::fs::{File, Metadata};
use std::io::{Read as _, Write as _};
use std::os::fd::{AsRawFd as _, FromRawFd as _};
use std::os::unix::fs::FileExt as _;
use std::path::Path;

use anyhow::Context as _;
use wasmtime::Engine;
use wasmtime::component::Component;

use super::key::KEY_LEN;
use super::{TRAILER_LEN, expected_tag, mac, matches};

/// Bytes copied at a time: big enough to keep the copy's system calls few, small enough to
/// stay in cache between the read, the tag and the write.
const CHUNK: usize = 256 << 10;

/// An artifact that verified, and what its file was like when it was opened.
pub(super) struct Verified {
    pub component: Component,
    pub metadata: Metadata,
    pub tag: blake3::Hash,
}

/// The component in the artifact at `path`, named `name`, when its tag under `key` verifies.
/// `Ok(None)` when no sealed copy can be made here (the caller loads it another way); an
/// error when the artifact does not verify or does not load.
pub(super) fn load(
    engine: &Engine,
    key: &[u8; KEY_LEN],
    name: &str,
    path: &Path,
) -> anyhow::Result<Option<Verified>> {
    let artifact = File::open(path).context("open the artifact")?;
    let metadata = artifact.metadata().context("read the artifact's metadata")?;
    let expected = stated_tag(&artifact, &metadata)?;
    let compiled_len = metadata.len() - TRAILER_LEN as u64;
    let Some(mut copy) = memfd() else { return Ok(None) };
    let mut tag = mac(key, name);
    let mut chunk = vec![0u8; CHUNK];
    let mut compiled = (&artifact).take(compiled_len);
    loop {
        let read = compiled.read(&mut chunk).context("read the artifact")?;
        if read == 0 {
            break;
        }
        tag.update(&chunk[..read]);
        copy.write_all(&chunk[..read]).context("copy the artifact into memory")?;
    }
    matches(tag.finalize(), expected)?;
    if !seal(&copy) {
        return Ok(None);
    }
    let mapped = format!("/proc/self/fd/{}", copy.as_raw_fd());
    if !Path::new(&mapped).exists() {
        return Ok(None);
    }
    // SAFETY: as `super::deserialize`: the bytes verified under the deployment's key, which
    // only `super::seal` applies to what `precompile_component` returned for this engine,
    // and the sealed copy cannot change from here on. wasmtime opens and maps the copy
    // itself; `copy` may close once it has.
    #[allow(unsafe_code)]
    match unsafe { Component::deserialize_file(engine, &mapped) } {
        Ok(component) => Ok(Some(Verified { component, metadata, tag: expected })),
        Err(error) => {
            // Memory the system will not map for execution, say: the bytes verified, so
            // they are read the other way rather than compiled again.
            tracing::debug!(%error, "cannot map the artifact's sealed copy; reading it instead");
            Ok(None)
        }
    }
}

/// The tag `artifact`'s trailer states (`metadata` its file's); an error when it has none.
pub(super) fn stated_tag(artifact: &File, metadata: &Metadata) -> anyhow::Result<blake3::Hash> {
    let mut trailer = [0u8; TRAILER_LEN];
    // A file shorter than the trailer has none: checked as an empty one.
    let trailer = match metadata.len().checked_sub(TRAILER_LEN as u64) {
        Some(at) => artifact.read_exact_at(&mut trailer, at).map(|()| &trailer[..]),
        None => Ok(&[][..]),
    };
    expected_tag(trailer.context("read the artifact's tag")?)
}

/// A file in memory that can be sealed, or `None` where there is none.
fn memfd() -> Option<File> {
    // SAFETY: a call with a valid C string and flags; it returns a new descriptor we own.
    #[allow(unsafe_code)]
    let fd = unsafe {
        libc::memfd_create(c"agent-host-artifact".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING)
    };
    // SAFETY: `fd` is a descriptor just opened for us and owned by nothing else.
    #[allow(unsafe_code)]
    (fd >= 0).then(|| unsafe { File::from_raw_fd(fd) })
}

/// Seals `copy` against writing, growing, shrinking and further sealing.
fn seal(copy: &File) -> bool {
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: `fcntl` on a descriptor `copy` owns, with an integer argument.
    #[allow(unsafe_code)]
    let sealed = unsafe { libc::fcntl(copy.as_raw_fd(), libc::F_ADD_SEALS, seals) };
    sealed == 0
}

#[cfg(test)]
mod tests {
    use wasmtime::{Config, Engine};

    use super::load;
    use crate::runtime::cache::key::KEY_LEN;

    /// The smallest component: the preamble of the component binary format, nothing else.
    const EMPTY_COMPONENT: &[u8] = &[0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

    #[test]
    fn an_artifact_is_loaded_from_its_sealed_copy_and_one_that_does_not_verify_is_refused() {
        let engine = Engine::new(Config::new().wasm_component_model(true)).unwrap();
        let compiled = engine.precompile_component(EMPTY_COMPONENT).unwrap();
        let key = [7u8; KEY_LEN];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.cwasm");
        std::fs::write(&path, super::super::seal(&key, "a.cwasm", &compiled)).unwrap();
        assert!(load(&engine, &key, "a.cwasm", &path).unwrap().is_some(), "loaded from the sealed copy");

        let error = load(&engine, &key, "b.cwasm", &path).err().unwrap();
        assert!(error.to_string().contains("tag does not match"), "another name: {error}");
        let error = load(&engine, &[8u8; KEY_LEN], "a.cwasm", &path).err().unwrap();
        assert!(error.to_string().contains("tag does not match"), "another key: {error}");
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let error = load(&engine, &key, "a.cwasm", &path).err().unwrap();
        assert!(error.to_string().contains("tag does not match"), "a byte changed: {error}");
        std::fs::write(&path, b"AHCWASM3").unwrap();
        let error = load(&engine, &key, "a.cwasm", &path).err().unwrap();
        assert!(error.to_string().contains("no tag"), "cut short: {error}");
    }
}
