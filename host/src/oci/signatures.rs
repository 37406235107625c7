//! The registry side of signatures ([`super::signature`] makes and checks them): a `.sig`
//! manifest pushed beside an artifact in cosign's layout, fetched by its tag, and its layers
//! kept in the cache beside the component, so a key policy still holds with the registry down.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use serde::{Deserialize, Serialize};

use super::cache::ComponentCache;
use super::connection::Connection;
use super::error::OciError;
use super::signature::{
    SIGNATURE_ANNOTATION, SIGNATURE_LAYER_MEDIA_TYPE, SignatureLayer, SigningKey, payload, signature_tag,
};
use crate::config::RegistryConfig;

/// The empty config cosign's `.sig` manifests carry.
const SIG_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";

/// Signs `manifest_digest` of `reference` with the private key at `key` and pushes the
/// signature at the tag cosign looks for (`sha256-HEX.sig`), replacing any there.
pub async fn sign(
    reference: &str,
    manifest_digest: &str,
    key: &Path,
    registries: &RegistryConfig,
) -> Result<(), OciError> {
    let connection = Connection::open(reference, registries)?;
    let key = SigningKey::read(key).map_err(|error| OciError::Untrusted {
        reference: reference.to_owned(),
        digest: manifest_digest.to_owned(),
        detail: format!("{error:#}"),
    })?;
    let docker_reference =
        format!("{}/{}", connection.reference.registry(), connection.reference.repository());
    let body = payload(&docker_reference, manifest_digest);
    let signature = key.sign(&body);
    let layer = ImageLayer {
        data: body.into(),
        media_type: SIGNATURE_LAYER_MEDIA_TYPE.to_owned(),
        annotations: Some(BTreeMap::from([(SIGNATURE_ANNOTATION.to_owned(), signature)])),
    };
    let config = Config {
        data: b"{}".to_vec().into(),
        media_type: SIG_CONFIG_MEDIA_TYPE.to_owned(),
        annotations: None,
    };
    let at = connection.at_tag(&signature_tag(manifest_digest));
    let manifest = OciImageManifest::build(std::slice::from_ref(&layer), &config, None);
    connection
        .client
        .push(&at, &[layer], config, &connection.auth, Some(manifest))
        .await
        .map_err(|error| connection.failed("pushing the signature", &error))?;
    Ok(())
}

/// One signature layer as the cache keeps it.
#[derive(Serialize, Deserialize)]
struct KeptLayer {
    /// The payload, base64.
    payload: String,
    signature: String,
}

/// The signature layers of `manifest_digest` in `connection`'s repository; none when there
/// is no `.sig` manifest.
pub async fn fetch(connection: &Connection, manifest_digest: &str) -> Result<Vec<SignatureLayer>, OciError> {
    let at = connection.at_tag(&signature_tag(manifest_digest));
    let manifest = match connection.client.pull_image_manifest(&at, &connection.auth).await {
        Ok((manifest, _)) => manifest,
        Err(oci_client::errors::OciDistributionError::ImageManifestNotFoundError(_)) => return Ok(Vec::new()),
        Err(oci_client::errors::OciDistributionError::RegistryError { envelope, .. })
            if envelope
                .errors
                .iter()
                .any(|error| error.code == oci_client::errors::OciErrorCode::ManifestUnknown) =>
        {
            return Ok(Vec::new());
        }
        Err(error) => return Err(connection.failed("fetching the signatures", &error)),
    };
    let mut layers = Vec::new();
    for descriptor in manifest.layers.iter().filter(|layer| layer.media_type == SIGNATURE_LAYER_MEDIA_TYPE) {
        let Some(signature) = descriptor.annotations.as_ref().and_then(|a| a.get(SIGNATURE_ANNOTATION))
        else {
            continue;
        };
        let mut payload = Vec::new();
        connection
            .client
            .pull_blob(&at, descriptor, &mut payload)
            .await
            .map_err(|error| connection.failed("fetching a signature's payload", &error))?;
        layers.push(SignatureLayer { payload, signature: signature.clone() });
    }
    Ok(layers)
}

/// `layers` kept beside the component, as the signatures of `manifest_digest`.
pub fn keep(
    cache: &ComponentCache,
    manifest_digest: &str,
    layers: &[SignatureLayer],
) -> Result<(), OciError> {
    let kept: Vec<KeptLayer> = layers
        .iter()
        .map(|layer| KeptLayer {
            payload: base64::engine::general_purpose::STANDARD.encode(&layer.payload),
            signature: layer.signature.clone(),
        })
        .collect();
    let text = serde_json::to_vec(&kept).unwrap_or_default();
    cache.keep(&cache.path_of(manifest_digest, "sig.json"), &text).map(|_| ())
}

/// The signature layers kept for `manifest_digest`; none when none are.
pub fn kept(cache: &ComponentCache, manifest_digest: &str) -> Vec<SignatureLayer> {
    let Ok(text) = std::fs::read(cache.path_of(manifest_digest, "sig.json")) else { return Vec::new() };
    let kept: Vec<KeptLayer> = serde_json::from_slice(&text).unwrap_or_default();
    kept.into_iter()
        .filter_map(|layer| {
            let payload = base64::engine::general_purpose::STANDARD.decode(layer.payload).ok()?;
            Some(SignatureLayer { payload, signature: layer.signature })
        })
        .collect()
}
