//! Key files: the private key that signs (cosign's encrypted format, or a plain PKCS#8 / SEC1
//! PEM as openssl writes it) and the public keys a policy trusts (SPKI PEM, as cosign writes
//! `cosign.pub`). Only ECDSA P-256, the curve cosign's keys use.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use p256::SecretKey;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::pkcs8::der::pem;
use p256::pkcs8::{DecodePrivateKey as _, DecodePublicKey as _, EncodePrivateKey as _};
use p256::pkcs8::{EncodePublicKey as _, LineEnding};
use sha2::{Digest as _, Sha256};

use super::cosign_key;

/// The environment variable cosign reads an encrypted key's password from.
pub const PASSWORD_VAR: &str = "COSIGN_PASSWORD";

/// A private key that signs payloads, as cosign does: ECDSA P-256 over SHA-256, DER encoded.
pub struct SigningKey {
    key: p256::ecdsa::SigningKey,
}

impl SigningKey {
    /// Reads `path`: cosign's encrypted key (password from `COSIGN_PASSWORD`, which may be
    /// empty but must be set), or a plain `PRIVATE KEY` (PKCS#8) or `EC PRIVATE KEY` (SEC1)
    /// PEM. The error names the file and what is wrong with it.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow!("signing key {}: cannot read it: {e}", path.display()))?;
        Self::from_pem(&text, || std::env::var_os(PASSWORD_VAR).map(|p| p.into_encoded_bytes()))
            .map_err(|e| anyhow!("signing key {}: {e:#}", path.display()))
    }

    /// Parses a private key PEM; `password` is asked only for an encrypted cosign key.
    pub(super) fn from_pem(text: &str, password: impl FnOnce() -> Option<Vec<u8>>) -> anyhow::Result<Self> {
        let blocks = pem_blocks(text);
        let Some((label, block)) = blocks.iter().find(|(label, _)| label.contains("PRIVATE KEY")) else {
            let found: Vec<&str> = blocks.iter().map(|(label, _)| *label).collect();
            bail!("it holds no private key PEM block (found: {found:?})");
        };
        let (_, der) = pem::decode_vec(block.as_bytes())
            .map_err(|e| anyhow!("its {label} PEM block is malformed: {e}"))?;
        let secret = match *label {
            cosign_key::LABEL | cosign_key::LEGACY_LABEL => {
                let password = password()
                    .ok_or_else(|| anyhow!("it is an encrypted cosign key and {PASSWORD_VAR} is not set"))?;
                let pkcs8 = cosign_key::open(&der, &password)?;
                SecretKey::from_pkcs8_der(&pkcs8)
                    .map_err(|e| anyhow!("its sealed key is not a P-256 PKCS#8 key: {e}"))?
            }
            "PRIVATE KEY" => SecretKey::from_pkcs8_der(&der)
                .map_err(|e| anyhow!("it is not an ECDSA P-256 key (cosign keys are P-256): {e}"))?,
            "EC PRIVATE KEY" => SecretKey::from_sec1_der(&der)
                .map_err(|e| anyhow!("it is not an ECDSA P-256 key (cosign keys are P-256): {e}"))?,
            "ENCRYPTED PRIVATE KEY" => bail!(
                "it is a password-protected PKCS#8 key, which is not read: convert it with \
                 `openssl pkey -in KEY -out PLAIN` or use a cosign key"
            ),
            other => bail!("its {other} PEM block is not a key this reads"),
        };
        Ok(Self { key: secret.into() })
    }

    /// Makes a new random key.
    pub fn random() -> anyhow::Result<Self> {
        // A random 32-byte string is a valid P-256 scalar except with probability ~2^-32.
        for _ in 0..8 {
            let mut bytes = zeroize::Zeroizing::new([0u8; 32]);
            getrandom::fill(bytes.as_mut_slice()).map_err(|e| anyhow!("no randomness for a new key: {e}"))?;
            if let Ok(secret) = SecretKey::from_slice(bytes.as_slice()) {
                return Ok(Self { key: secret.into() });
            }
        }
        bail!("no valid P-256 scalar in 8 random draws")
    }

    /// The base64 of the ASN.1 DER ECDSA P-256 / SHA-256 signature over `payload`, the value
    /// of a layer's [`SIGNATURE_ANNOTATION`](super::SIGNATURE_ANNOTATION).
    pub fn sign(&self, payload: &[u8]) -> String {
        let signature: Signature = self.key.sign(payload);
        BASE64.encode(signature.to_der().as_bytes())
    }

    /// The public key as an SPKI `PUBLIC KEY` PEM, the form of `cosign.pub`.
    pub fn public_key_pem(&self) -> String {
        self.key
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .expect("a P-256 public key always encodes as SPKI")
    }

    /// This key in cosign's encrypted format under `password` (what `cosign.key` holds).
    pub fn to_cosign_pem(&self, password: &[u8]) -> anyhow::Result<String> {
        self.to_cosign_pem_with_cost(password, cosign_key::SCRYPT_LOG_N)
    }

    pub(super) fn to_cosign_pem_with_cost(&self, password: &[u8], log_n: u8) -> anyhow::Result<String> {
        let pkcs8 = self.key.to_pkcs8_der().map_err(|e| anyhow!("encoding the key as PKCS#8 failed: {e}"))?;
        let body = cosign_key::seal(pkcs8.as_bytes(), password, log_n)?;
        pem::encode_string(cosign_key::LABEL, LineEnding::LF, &body)
            .map_err(|e| anyhow!("encoding the key as PEM failed: {e}"))
    }
}

/// A new key pair: (cosign's encrypted private key under `password`, the public key PEM), the
/// contents of `cosign.key` and `cosign.pub` as `cosign generate-key-pair` writes them.
pub fn generate(password: &[u8]) -> anyhow::Result<(String, String)> {
    let key = SigningKey::random()?;
    Ok((key.to_cosign_pem(password)?, key.public_key_pem()))
}

/// One public key a policy trusts.
pub(super) struct TrustedKey {
    pub(super) path: PathBuf,
    pub(super) key: VerifyingKey,
    /// `sha256:<hex>` of the key's SPKI DER.
    pub(super) fingerprint: String,
}

/// The public keys whose signatures an artifact may carry.
pub struct TrustedKeys {
    pub(super) keys: Vec<TrustedKey>,
}

impl TrustedKeys {
    /// Reads each of `paths` as an SPKI `PUBLIC KEY` PEM of an ECDSA P-256 key (`cosign.pub`).
    /// The error names the file and what is wrong with it; no paths is an error, since a
    /// policy that trusts no key could never pass.
    pub fn read(paths: &[PathBuf]) -> anyhow::Result<Self> {
        if paths.is_empty() {
            bail!("no trusted public keys given");
        }
        let keys = paths
            .iter()
            .map(|path| {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| anyhow!("trusted public key {}: cannot read it: {e}", path.display()))?;
                trusted_key(path, &text).map_err(|e| anyhow!("trusted public key {}: {e:#}", path.display()))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { keys })
    }

    /// The key files and their fingerprints, comma-separated, for messages.
    pub(super) fn describe(&self) -> String {
        let mut out = String::new();
        for (i, key) in self.keys.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            let _ = write!(out, "{sep}{} ({})", key.path.display(), key.fingerprint);
        }
        out
    }
}

fn trusted_key(path: &Path, text: &str) -> anyhow::Result<TrustedKey> {
    let blocks = pem_blocks(text);
    let Some((_, block)) = blocks.iter().find(|(label, _)| *label == "PUBLIC KEY") else {
        let found: Vec<&str> = blocks.iter().map(|(label, _)| *label).collect();
        bail!("it holds no PUBLIC KEY PEM block (found: {found:?})");
    };
    let (_, der) = pem::decode_vec(block.as_bytes())
        .map_err(|e| anyhow!("its PUBLIC KEY PEM block is malformed: {e}"))?;
    let key = VerifyingKey::from_public_key_der(&der)
        .map_err(|e| anyhow!("it is not an ECDSA P-256 public key (cosign keys are P-256): {e}"))?;
    Ok(TrustedKey { path: path.to_owned(), key, fingerprint: fingerprint(&der) })
}

/// `sha256:<hex>` of an SPKI DER: names a key in messages and in [`Signer`](super::Signer).
pub(super) fn fingerprint(spki_der: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(spki_der)))
}

/// The PEM blocks in `text` as (label, the block from BEGIN to END), in order. openssl puts
/// an `EC PARAMETERS` block before the key, and text around blocks is allowed.
fn pem_blocks(text: &str) -> Vec<(&str, &str)> {
    const BEGIN: &str = "-----BEGIN ";
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some(start) = text[from..].find(BEGIN).map(|i| from + i) {
        let after_begin = start + BEGIN.len();
        let Some(label_len) = text[after_begin..].find("-----") else {
            break;
        };
        let label = &text[after_begin..after_begin + label_len];
        let end_line = format!("-----END {label}-----");
        let Some(end) = text[after_begin..].find(&end_line) else {
            break;
        };
        let block_end = after_begin + end + end_line.len();
        blocks.push((label, &text[start..block_end]));
        from = block_end;
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_blocks_finds_each_block_with_its_label_amid_other_text() {
        let text = "junk\n-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n\
                    -----BEGIN EC PRIVATE KEY-----\nAA==\n-----END EC PRIVATE KEY-----\n";
        let labels: Vec<&str> = pem_blocks(text).iter().map(|(l, _)| *l).collect();
        assert_eq!(labels, ["EC PARAMETERS", "EC PRIVATE KEY"]);
    }

    #[test]
    fn an_encrypted_key_without_a_password_says_which_variable_is_missing() {
        let pem = SigningKey::random().unwrap().to_cosign_pem_with_cost(b"pw", 10).unwrap();
        let err = SigningKey::from_pem(&pem, || None).err().unwrap().to_string();
        assert!(err.contains("COSIGN_PASSWORD is not set"), "{err}");
    }

    #[test]
    fn a_public_key_where_a_private_key_belongs_is_refused_by_name() {
        let public = SigningKey::random().unwrap().public_key_pem();
        let err = SigningKey::from_pem(&public, || None).err().unwrap().to_string();
        assert!(err.contains("no private key") && err.contains("PUBLIC KEY"), "{err}");
    }

    #[test]
    fn trusted_keys_name_the_file_that_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.pub");
        let bad = dir.path().join("bad.pub");
        std::fs::write(&good, SigningKey::random().unwrap().public_key_pem()).unwrap();
        std::fs::write(&bad, "not a key").unwrap();
        let err = TrustedKeys::read(&[good.clone(), bad.clone()]).err().unwrap().to_string();
        assert!(err.contains(&bad.display().to_string()), "{err}");
        assert!(err.contains("no PUBLIC KEY"), "{err}");
        let missing = dir.path().join("missing.pub");
        let err = TrustedKeys::read(std::slice::from_ref(&missing)).err().unwrap().to_string();
        assert!(err.contains("missing.pub") && err.contains("cannot read"), "{err}");
        assert!(TrustedKeys::read(&[]).is_err());
        assert_eq!(TrustedKeys::read(&[good]).unwrap().keys.len(), 1);
    }
}
