//! The load path of an `oci` plugin: the lock's digest, never the tag's; its declared grants
//! checked against the entry's before any blob is fetched; its trust policy met; its bytes
//! checked against the digest before anything compiles them; kept in the cache by digest.

use std::path::PathBuf;

use super::artifact::fetch_layer;
use super::cache::ComponentCache;
use super::connection::Connection;
use super::error::OciError;
use super::lock::{LockedPlugin, Lockfile};
use super::trust;
use crate::config::{Config, Grants};

/// The component file for the `oci = "REFERENCE"` entry granted `granted`.
pub async fn component_of(reference: &str, granted: &Grants, config: &Config) -> Result<PathBuf, OciError> {
    let lock_path = config.lock_path();
    let lock = Lockfile::read(&lock_path)?;
    let locked = lock
        .get(reference)
        .ok_or_else(|| OciError::NotPinned { reference: reference.to_owned(), lock: lock_path.clone() })?;
    let missing = locked.grants.missing_from(granted);
    if !missing.is_empty() {
        return Err(OciError::GrantsMissing { reference: reference.to_owned(), missing });
    }
    fetched(locked, config).await
}

/// `locked`'s component, from the cache or the registry, its trust policy met.
pub async fn fetched(locked: &LockedPlugin, config: &Config) -> Result<PathBuf, OciError> {
    let cache = ComponentCache::under(&config.resolve(&config.runtime.cache_dir));
    let cached = cache.component(&locked.layer);
    // A signature kept when it was fetched proves it offline; else ask the registry.
    if let Some(path) = &cached
        && trust::cached_signer_of(&locked.reference, config, &cache, &locked.manifest).is_ok()
    {
        return Ok(path.clone());
    }
    let connection = Connection::open(&locked.reference, &config.registry)?;
    trust::signer_of(&connection, config, &cache, &locked.manifest).await?;
    match cached {
        Some(path) => Ok(path),
        None => cache.keep_component(&locked.layer, &fetch_layer(&connection, &locked.layer).await?),
    }
}
