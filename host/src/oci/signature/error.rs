//! Why an artifact's signatures were refused. Callers branch on the variant (no signature at
//! all is a different situation from a signature by someone else); every message names the
//! digest and, for one layer, the layer's index in the `.sig` manifest.

/// Why [`TrustedKeys::verify`](super::TrustedKeys::verify) accepted no layer.
///
/// When several layers fail for different reasons, the error is the one of the layer that got
/// furthest through the checks (base64, DER, trusted key, payload JSON, payload type, payload
/// digest), the first such layer on a tie: a payload for another digest signed by a trusted key
/// says more than an unreadable signature beside it.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum SignatureError {
    /// The `.sig` manifest has no layers (or the caller found no `.sig` manifest at all).
    #[error("{digest} has no signature: no cosign signature layer to check")]
    NoSignature { digest: String },

    /// The signature annotation is not base64.
    #[error("signature of {digest}, layer {layer}: the signature annotation is not base64: {reason}")]
    MalformedBase64 { digest: String, layer: usize, reason: String },

    /// The signature decodes but is not an ASN.1 DER ECDSA signature.
    #[error(
        "signature of {digest}, layer {layer}: the signature is not an ASN.1 DER ECDSA signature: {reason}"
    )]
    MalformedSignature { digest: String, layer: usize, reason: String },

    /// The signature verifies under none of the trusted keys (another key, or the payload or
    /// signature was changed).
    #[error("{digest} is not signed by a trusted key: no signature layer verifies under {trusted}")]
    NotSignedByTrustedKey {
        digest: String,
        /// The trusted key files, comma-separated, for the message.
        trusted: String,
    },

    /// A trusted key signed the payload, but it is not a simple-signing document.
    #[error(
        "signature of {digest}, layer {layer}: the signed payload is not a cosign simple-signing document: {reason}"
    )]
    MalformedPayload { digest: String, layer: usize, reason: String },

    /// A trusted key signed a payload whose `critical.type` is not cosign's.
    #[error(
        "signature of {digest}, layer {layer}: the signed payload's critical.type is {found:?}, not {expected:?}",
        expected = super::PAYLOAD_TYPE
    )]
    WrongPayloadType { digest: String, layer: usize, found: String },

    /// A trusted key signed a payload for another manifest digest: a signature moved from
    /// another artifact.
    #[error("signature of {digest}, layer {layer}: the signed payload is for {signed}, not {digest}")]
    PayloadForAnotherDigest { digest: String, layer: usize, signed: String },
}

impl SignatureError {
    /// How far through the checks a layer got before this error; see [`SignatureError`].
    pub(super) fn rank(&self) -> u8 {
        match self {
            Self::NoSignature { .. } => 0,
            Self::MalformedBase64 { .. } => 1,
            Self::MalformedSignature { .. } => 2,
            Self::NotSignedByTrustedKey { .. } => 3,
            Self::MalformedPayload { .. } => 4,
            Self::WrongPayloadType { .. } => 5,
            Self::PayloadForAnotherDigest { .. } => 6,
        }
    }
}
