//! `[plugins] trust`: what a component must prove besides its pinned digest. Under `digest`
//! nothing more; under `keys`, a cosign signature of its manifest digest by one of the keys,
//! checked when it is pinned and again whenever it is loaded — from the signatures kept in
//! the cache beside it when they prove it, else from the registry. Every failure refuses the
//! plugin, naming the reference, the digest and what was missing.

use std::path::PathBuf;

use super::cache::ComponentCache;
use super::connection::Connection;
use super::error::OciError;
use super::lock::UNSIGNED;
use super::signature::{SignatureLayer, TrustedKeys};
use super::signatures;
use crate::config::{Config, TrustPolicy};

/// Who signed `manifest_digest` of `connection`'s repository, as the lock records it (`none`
/// under the digest policy), the signatures asked of the registry and kept; `Err` when the
/// policy is not met.
pub async fn signer_of(
    connection: &Connection,
    config: &Config,
    cache: &ComponentCache,
    manifest_digest: &str,
) -> Result<String, OciError> {
    let Some(keys) = trusted_keys(&connection.written, config, manifest_digest)? else {
        return Ok(UNSIGNED.to_owned());
    };
    let layers = signatures::fetch(connection, manifest_digest).await?;
    let signer = verified(&connection.written, &keys, manifest_digest, &layers)?;
    signatures::keep(cache, manifest_digest, &layers)?;
    Ok(signer)
}

/// The same check from the signatures kept in the cache alone, for a host that cannot (or
/// need not) reach the registry.
pub fn cached_signer_of(
    reference: &str,
    config: &Config,
    cache: &ComponentCache,
    manifest_digest: &str,
) -> Result<String, OciError> {
    let Some(keys) = trusted_keys(reference, config, manifest_digest)? else {
        return Ok(UNSIGNED.to_owned());
    };
    verified(reference, &keys, manifest_digest, &signatures::kept(cache, manifest_digest))
}

/// The keys of a key policy; `None` under the digest policy.
fn trusted_keys(reference: &str, config: &Config, digest: &str) -> Result<Option<TrustedKeys>, OciError> {
    let TrustPolicy::Keys(paths) = &config.registry.trust else { return Ok(None) };
    let paths: Vec<PathBuf> = paths.iter().map(|path| config.resolve(path.get_ref())).collect();
    TrustedKeys::read(&paths).map(Some).map_err(|error| OciError::Untrusted {
        reference: reference.to_owned(),
        digest: digest.to_owned(),
        detail: format!("the trusted keys cannot be read: {error:#}"),
    })
}

fn verified(
    reference: &str,
    keys: &TrustedKeys,
    digest: &str,
    layers: &[SignatureLayer],
) -> Result<String, OciError> {
    keys.verify(digest, layers).map(|signer| signer.fingerprint).map_err(|error| OciError::Untrusted {
        reference: reference.to_owned(),
        digest: digest.to_owned(),
        detail: format!("no valid signature by a key of [plugins] trust.keys: {error}"),
    })
}
