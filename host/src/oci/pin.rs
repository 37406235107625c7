//! Pinning a tag: what `agent-host plugin add` and `plugin update` ask the registry before the
//! operator accepts — the manifest the tag points at now, read (never a blob), its trust
//! policy met.

use super::annotations::PluginAnnotations;
use super::artifact::Artifact;
use super::cache::ComponentCache;
use super::connection::Connection;
use super::error::OciError;
use super::lock::LockedPlugin;
use super::trust;
use crate::config::Config;

/// What the tag of `reference` points at now, as the lock would pin it.
pub async fn resolve(reference: &str, config: &Config) -> Result<LockedPlugin, OciError> {
    let connection = Connection::open(reference, &config.registry)?;
    let artifact = Artifact::fetch(&connection, &connection.reference).await?;
    let cache = ComponentCache::under(&config.resolve(&config.runtime.cache_dir));
    let signer = trust::signer_of(&connection, config, &cache, &artifact.manifest_digest).await?;
    let PluginAnnotations { contract, exports, grants } = artifact.annotations;
    Ok(LockedPlugin {
        reference: reference.to_owned(),
        manifest: artifact.manifest_digest,
        layer: artifact.layer.digest,
        contract,
        exports,
        signer,
        grants,
    })
}
