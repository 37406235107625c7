//! Precompiled components on disk, keyed by the component's SHA-256 and the engine's
//! compatibility hash, so a restart or a reload of an unchanged plugin skips cranelift.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

use anyhow::Context as _;
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The component for `bytes`, its hash, and whether it came from the cache.
pub fn component(
    engine: &Engine,
    cache_dir: &Path,
    bytes: &[u8],
) -> anyhow::Result<(Component, String, bool)> {
    let hash = hex::encode(Sha256::digest(bytes));
    let mut engine_hash = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut engine_hash);
    let artifact = cache_dir.join(format!("{hash}-{:016x}.cwasm", engine_hash.finish()));
    if artifact.is_file() {
        match deserialize(engine, &artifact) {
            Ok(component) => return Ok((component, hash, true)),
            Err(error) => tracing::warn!(
                artifact = %artifact.display(), %error, "ignoring an unusable cached component"
            ),
        }
    }
    let compiled = engine.precompile_component(bytes)?;
    let component = from_precompiled(engine, &compiled)?;
    if let Err(error) = store(cache_dir, &artifact, &compiled) {
        tracing::warn!(dir = %cache_dir.display(), %error, "cannot write the compile cache");
    }
    Ok((component, hash, false))
}

/// Writes through a temporary file and a rename, so a reader never sees half an artifact.
fn store(cache_dir: &Path, artifact: &Path, compiled: &[u8]) -> anyhow::Result<()> {
    std::fs::create_dir_all(cache_dir).context("create the cache folder")?;
    let mut temp = tempfile::NamedTempFile::new_in(cache_dir).context("create a temporary file")?;
    std::io::Write::write_all(&mut temp, compiled).context("write the artifact")?;
    temp.persist(artifact).context("move the artifact into place")?;
    Ok(())
}

#[allow(unsafe_code)]
fn deserialize(engine: &Engine, artifact: &Path) -> anyhow::Result<Component> {
    // SAFETY: wasmtime requires that deserialized bytes came from `precompile_component` of
    // a compatible engine. Artifacts in this folder are written only by `store` above, named
    // by the engine's compatibility hash, and wasmtime re-checks the header on load.
    Ok(unsafe { Component::deserialize_file(engine, artifact) }?)
}

#[allow(unsafe_code)]
fn from_precompiled(engine: &Engine, compiled: &[u8]) -> anyhow::Result<Component> {
    // SAFETY: `compiled` was produced by `precompile_component` on this very engine, a
    // moment ago; loading it avoids compiling the component a second time.
    Ok(unsafe { Component::deserialize(engine, compiled) }?)
}
