//! A plugin artifact as a registry holds it, in the Wasm OCI layout: a manifest whose config
//! is `application/vnd.wasm.config.v0+json` and whose one layer is the `application/wasm`
//! component, annotated with what the plugin needs ([`PluginAnnotations`]).

use oci_client::Reference;
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use sha2::{Digest, Sha256};

use super::annotations::PluginAnnotations;
use super::connection::Connection;
use super::error::OciError;

/// What a manifest says of a plugin, read before any blob is fetched.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The manifest's digest: what `plugins.lock` pins.
    pub manifest_digest: String,
    /// The component layer.
    pub layer: OciDescriptor,
    pub annotations: PluginAnnotations,
}

/// `sha256:HEX` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

impl Artifact {
    /// The manifest `at` points to (a tag or a digest) in `connection`'s repository, checked
    /// to be a plugin artifact. Fetches the manifest alone.
    pub async fn fetch(connection: &Connection, at: &Reference) -> Result<Self, OciError> {
        let (manifest, digest) =
            connection.client.pull_image_manifest(at, &connection.auth).await.map_err(|error| {
                connection.failed(&format!("fetching the manifest of {}", at.whole()), &error)
            })?;
        if let Some(pinned) = at.digest()
            && pinned != digest
        {
            return Err(OciError::DigestMismatch {
                reference: connection.written.clone(),
                expected: pinned.to_owned(),
                actual: digest,
            });
        }
        Self::of(&connection.written, manifest, digest)
    }

    /// `manifest` (with digest `digest`) as a plugin artifact of `reference`.
    pub fn of(reference: &str, manifest: OciImageManifest, digest: String) -> Result<Self, OciError> {
        let not_a_plugin = |detail: String| OciError::NotAPlugin { reference: reference.to_owned(), detail };
        if manifest.config.media_type != oci_wasm::WASM_MANIFEST_CONFIG_MEDIA_TYPE {
            return Err(not_a_plugin(format!(
                "its config is `{}`, not `{}` (the Wasm OCI layout)",
                manifest.config.media_type,
                oci_wasm::WASM_MANIFEST_CONFIG_MEDIA_TYPE
            )));
        }
        let [layer] = manifest.layers.as_slice() else {
            return Err(not_a_plugin(format!("it has {} layers, not one component", manifest.layers.len())));
        };
        if layer.media_type != oci_wasm::WASM_LAYER_MEDIA_TYPE {
            return Err(not_a_plugin(format!(
                "its layer is `{}`, not `{}`",
                layer.media_type,
                oci_wasm::WASM_LAYER_MEDIA_TYPE
            )));
        }
        let annotations = PluginAnnotations::from_map(reference, manifest.annotations.as_ref())?;
        Ok(Self { manifest_digest: digest, layer: layer.clone(), annotations })
    }
}

/// The component layer `layer_digest` of `connection`'s repository, its bytes checked against
/// the digest before anything else sees them.
pub async fn fetch_layer(connection: &Connection, layer_digest: &str) -> Result<Vec<u8>, OciError> {
    let descriptor = OciDescriptor {
        media_type: oci_wasm::WASM_LAYER_MEDIA_TYPE.to_owned(),
        digest: layer_digest.to_owned(),
        ..OciDescriptor::default()
    };
    let mut bytes: Vec<u8> = Vec::new();
    let at = connection.at_digest(layer_digest);
    let pulled = connection.client.pull_blob(&at, &descriptor, &mut bytes).await;
    let actual = sha256_digest(&bytes);
    match pulled {
        Ok(()) if actual == layer_digest => Ok(bytes),
        // The client checks the digest as it reads; a mismatch is named whichever saw it.
        Ok(()) => Err(mismatch(connection, layer_digest, actual)),
        Err(oci_client::errors::OciDistributionError::DigestError(
            oci_client::errors::DigestError::VerificationError { actual, .. },
        )) => Err(mismatch(connection, layer_digest, actual)),
        Err(error) => Err(connection.failed(&format!("fetching the layer {layer_digest}"), &error)),
    }
}

fn mismatch(connection: &Connection, expected: &str, actual: String) -> OciError {
    OciError::DigestMismatch { reference: connection.written.clone(), expected: expected.to_owned(), actual }
}
