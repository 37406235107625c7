//! Precompiled components on disk, keyed by the component's SHA-256, the engine's
//! compatibility hash and the reshape's version (`super::reshape`), so a restart or a reload
//! of an unchanged plugin skips cranelift.
//!
//! An artifact is machine code the host runs as it is, so each one carries a MAC of its name
//! and bytes under a random key of the deployment's: keyed BLAKE3, which checks a Python
//! component's 36 MB artifact in a few milliseconds of a warm start where HMAC-SHA256 took
//! tens. The key is kept beside
//! the cache folder, not in it, readable by the owner only, and a plugin can be granted
//! neither (`config/grants.rs`): whoever can write an artifact cannot also vouch for it. An
//! artifact that does not verify (tampered with, cut short, another plugin's, from before
//! the tag) is compiled again, with a warning, and never deserialized. On Linux an artifact
//! is checked as it is copied into sealed memory, and mapped from there (`sealed.rs`); once
//! it has verified, it is mapped from its own file for as long as the file is unchanged and
//! nobody but its owner can write it (`remembered.rs`).
//!
//! The tag is the file's trailer, after the precompiled bytes, so the file from its first
//! byte is what wasmtime maps: its code and memory images, page-aligned, straight from it.

mod hashes;
mod key;
mod memo;
#[cfg(target_os = "linux")]
mod remembered;
#[cfg(target_os = "linux")]
mod sealed;

pub use hashes::{Identified, identify};
pub use memo::SETTLED;

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use key::{KEY_LEN, load_or_create_key};

/// What ends every artifact file but its tag, after the precompiled bytes. Version 1
/// artifacts carried an HMAC-SHA256 and version 2 their tag before the bytes: they no longer
/// verify and are compiled again, once.
const MAGIC: &[u8; 8] = b"AHCWASM3";
const TAG_LEN: usize = blake3::OUT_LEN;

/// The SHA-256 of a component's bytes, as the cache names it.
pub fn component_hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The component whose [`component_hash`] is `hash`, and whether it came from the cache;
/// `bytes` gives its bytes, asked for only when it has to be compiled.
pub fn component<'a>(
    engine: &Engine,
    cache_dir: &Path,
    hash: &str,
    bytes: impl FnOnce() -> anyhow::Result<&'a [u8]>,
) -> anyhow::Result<(Component, bool)> {
    // What made the artifact: the engine, and what the host does to a component before it.
    let mut made_by = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut made_by);
    super::reshape::VERSION.hash(&mut made_by);
    let name = format!("{hash}-{:016x}.cwasm", made_by.finish());
    let artifact = cache_dir.join(&name);
    let key = match load_or_create_key(&crate::config::compile_cache_key_path(cache_dir)) {
        Ok(key) => Some(key),
        Err(error) => {
            // Without its key the cache cannot be trusted: compile, and keep nothing.
            tracing::warn!(%error, "cannot use the compile cache's key; compiling without the cache");
            None
        }
    };
    if let Some(key) = &key
        && artifact.is_file()
    {
        match cached(engine, key, cache_dir, &name, &artifact) {
            Ok(component) => return Ok((component, true)),
            Err(error) => tracing::warn!(
                artifact = %artifact.display(), %error, "ignoring a cached component; compiling it again"
            ),
        }
    }
    let compiled = engine.precompile_component(&super::reshape::for_one_call(bytes()?))?;
    let component = deserialize(engine, &compiled)?;
    if let Some(key) = &key
        && let Err(error) = store(cache_dir, &artifact, &seal(key, &name, &compiled))
    {
        tracing::warn!(dir = %cache_dir.display(), %error, "cannot write the compile cache");
    }
    Ok((component, false))
}

/// The component in the artifact at `path`, named `name`, if its tag verifies under `key`.
fn cached(
    engine: &Engine,
    key: &[u8; KEY_LEN],
    cache_dir: &Path,
    name: &str,
    path: &Path,
) -> anyhow::Result<Component> {
    #[cfg(target_os = "linux")]
    {
        if let Some(component) = remembered::load(engine, key, cache_dir, path) {
            return Ok(component);
        }
        if let Some(verified) = sealed::load(engine, key, name, path)? {
            remembered::remember(key, cache_dir, path, &verified);
            return Ok(verified.component);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cache_dir;
    let file = std::fs::read(path).context("read the artifact")?;
    deserialize(engine, verified(key, name, &file)?)
}

/// The precompiled bytes of the artifact `file`, if its tag is the one `key` gives its name
/// and bytes.
fn verified<'a>(key: &[u8; KEY_LEN], name: &str, file: &'a [u8]) -> anyhow::Result<&'a [u8]> {
    let (compiled, trailer) = file.split_at(file.len().saturating_sub(TRAILER_LEN));
    matches(tag(key, name, compiled), expected_tag(trailer)?)?;
    Ok(compiled)
}

/// An artifact's magic and tag, after its bytes.
const TRAILER_LEN: usize = MAGIC.len() + TAG_LEN;

/// The tag an artifact ending with `trailer` carries.
fn expected_tag(trailer: &[u8]) -> anyhow::Result<blake3::Hash> {
    if trailer.len() < TRAILER_LEN || &trailer[..MAGIC.len()] != MAGIC {
        anyhow::bail!("the artifact has no tag (cut short, or written by an older version)");
    }
    Ok(blake3::Hash::from_slice(&trailer[MAGIC.len()..TRAILER_LEN])?)
}

/// Whether the tag worked out is the one the artifact carries.
fn matches(tag: blake3::Hash, expected: blake3::Hash) -> anyhow::Result<()> {
    // `blake3::Hash`'s equality takes the same time wherever the tags differ.
    anyhow::ensure!(tag == expected, "the artifact's tag does not match: it was changed or swapped");
    Ok(())
}

/// The artifact file for `compiled`: bytes, magic, tag.
fn seal(key: &[u8; KEY_LEN], name: &str, compiled: &[u8]) -> Vec<u8> {
    let mut file = Vec::with_capacity(compiled.len() + TRAILER_LEN);
    file.extend_from_slice(compiled);
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(tag(key, name, compiled).as_bytes());
    file
}

/// The MAC over an artifact's name (which names the component and engine it is for, so
/// another component's artifact under this name does not verify), then its bytes.
fn tag(key: &[u8; KEY_LEN], name: &str, compiled: &[u8]) -> blake3::Hash {
    let mut mac = mac(key, name);
    mac.update(compiled);
    mac.finalize()
}

/// The MAC of [`tag`] with the name taken in, ready for the bytes.
fn mac(key: &[u8; KEY_LEN], name: &str) -> blake3::Hasher {
    let mut mac = blake3::Hasher::new_keyed(key);
    mac.update(&(name.len() as u64).to_le_bytes());
    mac.update(name.as_bytes());
    mac
}

/// Writes through a temporary file and a rename, so a reader never sees half an artifact.
fn store(cache_dir: &Path, artifact: &Path, file: &[u8]) -> anyhow::Result<()> {
    create_private_dir(cache_dir).context("create the cache folder")?;
    let mut temp = tempfile::NamedTempFile::new_in(cache_dir).context("create a temporary file")?;
    temp.write_all(file).context("write the artifact")?;
    temp.persist(artifact).context("move the artifact into place")?;
    Ok(())
}

/// `dir` and any missing parent, made the owner's alone: a verified artifact is mapped from
/// its file only where no one else can write (`remembered.rs`), whatever the umask allows.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

#[allow(unsafe_code)]
fn deserialize(engine: &Engine, compiled: &[u8]) -> anyhow::Result<Component> {
    // SAFETY: wasmtime requires that the bytes came from `precompile_component` of a
    // compatible engine. They did: either this engine made them a moment ago, or they are
    // an artifact whose tag verified under the deployment's key, which only `seal` applies,
    // to bytes `precompile_component` returned for the engine named in the artifact's name
    // (and wasmtime re-checks the header on load).
    Ok(unsafe { Component::deserialize(engine, compiled) }?)
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    #[test]
    fn the_cache_folder_is_made_the_owners_alone() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("made/cache");
        super::store(&cache, &cache.join("a.cwasm"), b"bytes").unwrap();
        for folder in [&cache, &dir.path().join("made")] {
            let mode = std::fs::metadata(folder).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", folder.display());
        }
        assert_eq!(std::fs::read(cache.join("a.cwasm")).unwrap(), b"bytes");
    }
}
