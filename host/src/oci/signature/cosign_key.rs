//! cosign's encrypted private-key format, as `cosign generate-key-pair` writes it: a PEM block
//! (`ENCRYPTED SIGSTORE PRIVATE KEY`, older cosign `ENCRYPTED COSIGN PRIVATE KEY`) whose body
//! is the JSON
//! `{"kdf":{"name":"scrypt","params":{"N":..,"r":8,"p":1},"salt":".."},"cipher":{"name":"nacl/secretbox","nonce":".."},"ciphertext":".."}`:
//! the password through scrypt gives a 32-byte key, and NaCl secretbox (XSalsa20-Poly1305)
//! under it seals the PKCS#8 DER of the private key.

use anyhow::{Context as _, anyhow, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use crypto_secretbox::aead::{Aead as _, KeyInit as _};
use crypto_secretbox::{Key, Nonce, XSalsa20Poly1305};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

/// The PEM label cosign 2 writes.
pub(super) const LABEL: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
/// The PEM label cosign 1 wrote, still read by cosign and by containers/image (skopeo).
pub(super) const LEGACY_LABEL: &str = "ENCRYPTED COSIGN PRIVATE KEY";

const KDF_NAME: &str = "scrypt";
const CIPHER_NAME: &str = "nacl/secretbox";
/// scrypt's cost as cosign writes it (2^15); cosign also writes 2^16 for some keys.
pub(super) const SCRYPT_LOG_N: u8 = 15;
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 1;
/// The largest cost read: 2^20 takes 1 GiB of memory, a bound on what a key file can ask.
const MAX_LOG_N: u8 = 20;
const SALT_LEN: usize = 32;
const NONCE_LEN: usize = 24;

#[derive(Serialize, Deserialize)]
struct Sealed {
    kdf: Kdf,
    cipher: Cipher,
    ciphertext: String,
}

#[derive(Serialize, Deserialize)]
struct Kdf {
    name: String,
    params: KdfParams,
    salt: String,
}

#[derive(Serialize, Deserialize)]
struct KdfParams {
    #[serde(rename = "N")]
    n: u64,
    r: u32,
    p: u32,
}

#[derive(Serialize, Deserialize)]
struct Cipher {
    name: String,
    nonce: String,
}

/// Opens the JSON body of a cosign key with `password`: the PKCS#8 DER it seals.
pub(super) fn open(body: &[u8], password: &[u8]) -> anyhow::Result<Zeroizing<Vec<u8>>> {
    let sealed: Sealed =
        serde_json::from_slice(body).context("its body is not cosign's encrypted-key JSON")?;
    if sealed.kdf.name != KDF_NAME {
        bail!("its key derivation is {:?}, not {KDF_NAME:?}", sealed.kdf.name);
    }
    if sealed.cipher.name != CIPHER_NAME {
        bail!("its cipher is {:?}, not {CIPHER_NAME:?}", sealed.cipher.name);
    }
    let KdfParams { n, r, p } = sealed.kdf.params;
    if !n.is_power_of_two() || n < 2 || n.trailing_zeros() > u32::from(MAX_LOG_N) {
        bail!("its scrypt N is {n}, not a power of two from 2 to 2^{MAX_LOG_N}");
    }
    let log_n = u8::try_from(n.trailing_zeros()).context("scrypt N out of range")?;
    let salt = BASE64.decode(&sealed.kdf.salt).context("its kdf.salt is not base64")?;
    let nonce = BASE64.decode(&sealed.cipher.nonce).context("its cipher.nonce is not base64")?;
    if nonce.len() != NONCE_LEN {
        bail!("its cipher.nonce is {} bytes, not {NONCE_LEN}", nonce.len());
    }
    let ciphertext = BASE64.decode(&sealed.ciphertext).context("its ciphertext is not base64")?;
    let key = derive_key(password, &salt, log_n, r, p)?;
    let plaintext = XSalsa20Poly1305::new(&key)
        .decrypt(Nonce::from_slice(&nonce), ciphertext.as_slice())
        .map_err(|_| {
            anyhow!("it does not open with this password (COSIGN_PASSWORD is wrong, or the file is damaged)")
        })?;
    Ok(Zeroizing::new(plaintext))
}

/// Seals `pkcs8_der` under `password` as cosign does (a fresh salt and nonce, scrypt at
/// 2^`log_n`): the JSON body of the PEM block.
pub(super) fn seal(pkcs8_der: &[u8], password: &[u8], log_n: u8) -> anyhow::Result<Vec<u8>> {
    let mut salt = [0u8; SALT_LEN];
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut salt).map_err(|e| anyhow!("no randomness for the salt: {e}"))?;
    getrandom::fill(&mut nonce).map_err(|e| anyhow!("no randomness for the nonce: {e}"))?;
    let key = derive_key(password, &salt, log_n, SCRYPT_R, SCRYPT_P)?;
    let ciphertext = XSalsa20Poly1305::new(&key)
        .encrypt(Nonce::from_slice(&nonce), pkcs8_der)
        .map_err(|_| anyhow!("sealing the key failed"))?;
    let sealed = Sealed {
        kdf: Kdf {
            name: KDF_NAME.to_owned(),
            params: KdfParams { n: 1u64 << log_n, r: SCRYPT_R, p: SCRYPT_P },
            salt: BASE64.encode(salt),
        },
        cipher: Cipher { name: CIPHER_NAME.to_owned(), nonce: BASE64.encode(nonce) },
        ciphertext: BASE64.encode(ciphertext),
    };
    Ok(serde_json::to_vec(&sealed)?)
}

fn derive_key(password: &[u8], salt: &[u8], log_n: u8, r: u32, p: u32) -> anyhow::Result<Key> {
    let params = scrypt::Params::new(log_n, r, p, 32)
        .map_err(|e| anyhow!("its scrypt parameters (2^{log_n}, r={r}, p={p}) are invalid: {e}"))?;
    let mut key = Zeroizing::new([0u8; 32]);
    scrypt::scrypt(password, salt, &params, key.as_mut_slice()).map_err(|e| anyhow!("scrypt failed: {e}"))?;
    Ok(Key::clone_from_slice(key.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_then_open_gives_the_plaintext_back_and_a_wrong_password_fails() {
        let sealed = seal(b"secret der", b"pw", 10).unwrap();
        assert_eq!(open(&sealed, b"pw").unwrap().as_slice(), b"secret der");
        let err = open(&sealed, b"other").unwrap_err().to_string();
        assert!(err.contains("does not open with this password"), "{err}");
    }

    #[test]
    fn an_unknown_cipher_or_an_absurd_cost_is_refused_by_name() {
        let sealed = seal(b"x", b"pw", 10).unwrap();
        let mut json: serde_json::Value = serde_json::from_slice(&sealed).unwrap();
        json["cipher"]["name"] = "aes".into();
        let err = open(&serde_json::to_vec(&json).unwrap(), b"pw").unwrap_err();
        assert!(err.to_string().contains("\"aes\""), "{err}");
        json["cipher"]["name"] = CIPHER_NAME.into();
        json["kdf"]["params"]["N"] = (1u64 << 30).into();
        let err = open(&serde_json::to_vec(&json).unwrap(), b"pw").unwrap_err();
        assert!(err.to_string().contains("scrypt N"), "{err}");
    }
}
