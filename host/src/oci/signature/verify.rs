//! The check of an artifact's cosign signatures against the trusted keys. It fails closed: a
//! layer counts only if its signature verifies under a trusted key over the payload bytes as
//! stored, and that signed payload is cosign's type and names this very manifest digest.

use std::path::PathBuf;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use p256::ecdsa::Signature;
use p256::ecdsa::signature::Verifier as _;

use super::keys::TrustedKey;
use super::{PAYLOAD_TYPE, SignatureError, SignatureLayer, SimpleSigning, TrustedKeys};

/// Who signed an artifact: the trusted key whose signature was accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signer {
    /// The trusted public key's file.
    pub key: PathBuf,
    /// `sha256:<hex>` of the key's SPKI DER.
    pub fingerprint: String,
    /// The `critical.identity.docker-reference` of the accepted payload (where the signer
    /// pushed it); informative only, since the digest is what binds the content.
    pub docker_reference: String,
}

impl TrustedKeys {
    /// Checks the layers of the `.sig` manifest of the artifact whose manifest digest is
    /// `manifest_digest`: the first layer that passes names the [`Signer`]; if none passes,
    /// the error says why (see [`SignatureError`] for which layer's reason is given).
    pub fn verify(&self, manifest_digest: &str, layers: &[SignatureLayer]) -> Result<Signer, SignatureError> {
        let mut refusal: Option<SignatureError> = None;
        for (index, layer) in layers.iter().enumerate() {
            match self.verify_layer(manifest_digest, index, layer) {
                Ok(signer) => return Ok(signer),
                Err(err) => {
                    if refusal.as_ref().is_none_or(|kept| err.rank() > kept.rank()) {
                        refusal = Some(err);
                    }
                }
            }
        }
        Err(refusal.unwrap_or_else(|| SignatureError::NoSignature { digest: manifest_digest.to_owned() }))
    }

    fn verify_layer(
        &self,
        digest: &str,
        layer: usize,
        SignatureLayer { payload, signature }: &SignatureLayer,
    ) -> Result<Signer, SignatureError> {
        let digest_owned = || digest.to_owned();
        let der = BASE64.decode(signature.trim()).map_err(|e| SignatureError::MalformedBase64 {
            digest: digest_owned(),
            layer,
            reason: e.to_string(),
        })?;
        let signature = Signature::from_der(&der).map_err(|e| SignatureError::MalformedSignature {
            digest: digest_owned(),
            layer,
            reason: e.to_string(),
        })?;
        let TrustedKey { path, fingerprint, .. } =
            self.keys.iter().find(|trusted| trusted.key.verify(payload, &signature).is_ok()).ok_or_else(
                || SignatureError::NotSignedByTrustedKey { digest: digest_owned(), trusted: self.describe() },
            )?;
        // Only now, with the bytes known to come from a trusted key, is the payload read.
        let signed: SimpleSigning = serde_json::from_slice(payload).map_err(|e| {
            SignatureError::MalformedPayload { digest: digest_owned(), layer, reason: e.to_string() }
        })?;
        if signed.critical.kind != PAYLOAD_TYPE {
            return Err(SignatureError::WrongPayloadType {
                digest: digest_owned(),
                layer,
                found: signed.critical.kind,
            });
        }
        if signed.critical.image.docker_manifest_digest != digest {
            return Err(SignatureError::PayloadForAnotherDigest {
                digest: digest_owned(),
                layer,
                signed: signed.critical.image.docker_manifest_digest,
            });
        }
        Ok(Signer {
            key: path.clone(),
            fingerprint: fingerprint.clone(),
            docker_reference: signed.critical.identity.docker_reference,
        })
    }
}
