//! Signatures of plugin artifacts, in the format cosign stores beside an artifact, so that
//! `cosign sign --key`/`cosign verify --key` and skopeo's sigstore support make and check the
//! same signatures this module does.
//!
//! What is stored: for an artifact whose manifest digest is `sha256:<hex>`, an OCI image
//! manifest at tag `sha256-<hex>.sig` in the same repository (see [`signature_tag`]). Each of
//! its layers ([`SignatureLayer`]) is a "simple signing" payload ([`payload`]) with media type
//! [`SIGNATURE_LAYER_MEDIA_TYPE`], and its annotation [`SIGNATURE_ANNOTATION`] holds the base64
//! of an ECDSA P-256 / SHA-256 signature (ASN.1 DER) over the payload's bytes as stored.
//!
//! Why not the `sigstore` crate: even with no features it links `aws-lc-rs` (a C library built
//! with cmake), `x509-cert`, `rustls-webpki`, `chrono` and `tokio`, and its cosign checks
//! (payload digest, type) live behind the `cosign` feature, which brings an OCI client, fulcio,
//! rekor and OAuth. What we need — key files, ECDSA P-256, the payload — is small, so this
//! module uses the RustCrypto crates that crate itself builds on (`p256`, `scrypt`,
//! `crypto_secretbox`).
//!
//! The files:
//! - `error.rs`: [`SignatureError`], why an artifact's signatures were refused;
//! - `keys.rs`: [`SigningKey`] (reading cosign and PEM private keys, signing) and
//!   [`TrustedKeys`] (public keys);
//! - `cosign_key.rs`: cosign's encrypted private-key format (scrypt + NaCl secretbox);
//! - `verify.rs`: [`TrustedKeys::verify`], the fail-closed check of a `.sig` manifest's layers;
//! - `tests.rs`: round trips, refusals, and interop with `openssl` and a key cosign wrote;
//! - `interop.rs`: ignored tests, the steps `scripts/check-signature-interop.sh` runs between
//!   skopeo and a local registry.

mod cosign_key;
mod error;
mod keys;
mod verify;

#[cfg(test)]
mod interop;
#[cfg(test)]
mod tests;

pub use error::SignatureError;
pub use keys::{SigningKey, TrustedKeys, generate};
pub use verify::Signer;

use serde::{Deserialize, Serialize};

/// The media type of each layer of a cosign `.sig` manifest: the payload is a simple-signing
/// JSON document.
pub const SIGNATURE_LAYER_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";

/// The layer annotation that holds the base64 of the DER signature over the layer's blob.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";

/// The `critical.type` cosign writes and requires in a payload.
pub const PAYLOAD_TYPE: &str = "cosign container image signature";

/// The tag that holds the signatures of the artifact whose manifest digest is
/// `manifest_digest`: `sha256:<hex>` becomes `sha256-<hex>.sig`, as cosign names it (a tag
/// cannot hold a colon).
pub fn signature_tag(manifest_digest: &str) -> String {
    format!("{}.sig", manifest_digest.replacen(':', "-", 1))
}

/// The simple-signing payload cosign signs for `manifest_digest` pushed as `docker_reference`
/// (`REGISTRY/REPO`, no tag or digest): the bytes to store as a layer blob and to sign.
pub fn payload(docker_reference: &str, manifest_digest: &str) -> Vec<u8> {
    let payload = SimpleSigning {
        critical: Critical {
            identity: Identity { docker_reference: docker_reference.to_owned() },
            image: Image { docker_manifest_digest: manifest_digest.to_owned() },
            kind: PAYLOAD_TYPE.to_owned(),
        },
        optional: None,
    };
    serde_json::to_vec(&payload).expect("a struct of strings always serializes to JSON")
}

/// One layer of a `.sig` manifest: the blob (the payload, exactly as stored) and the value of
/// its [`SIGNATURE_ANNOTATION`] annotation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureLayer {
    pub payload: Vec<u8>,
    /// Base64 of the ASN.1 DER ECDSA signature over `payload`.
    pub signature: String,
}

/// The simple-signing document. Field order is the order cosign writes; `optional` is
/// whatever the signer added (skopeo puts its name and a timestamp there) and is not checked.
#[derive(Serialize, Deserialize)]
struct SimpleSigning {
    critical: Critical,
    optional: Option<serde_json::Value>,
}

#[derive(Serialize, Deserialize)]
struct Critical {
    identity: Identity,
    image: Image,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Serialize, Deserialize)]
struct Identity {
    #[serde(rename = "docker-reference")]
    docker_reference: String,
}

#[derive(Serialize, Deserialize)]
struct Image {
    #[serde(rename = "docker-manifest-digest")]
    docker_manifest_digest: String,
}
