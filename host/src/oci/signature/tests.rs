//! Sign/verify round trips with real keys, every way `verify` must refuse, and interop with
//! the `openssl` command-line tool (its key files load; its signatures verify here; ours verify
//! there) and with a key file written by cosign itself.

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::*;

const DIGEST: &str = "sha256:4f3c7f4bb8d4bb1e1d43e6ee8c8c0d5c6c0ef2d1b0d9b3a2f3e4d5c6b7a89012";
const OTHER_DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000001";
const REFERENCE: &str = "registry.example/plugins/judge";

/// Writes `pem` to `dir/name` and returns the path.
fn write(dir: &Path, name: &str, pem: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, pem).unwrap();
    path
}

fn trusting(dir: &Path, keys: &[&SigningKey]) -> (TrustedKeys, Vec<PathBuf>) {
    let paths: Vec<PathBuf> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| write(dir, &format!("trusted-{i}.pub"), &key.public_key_pem()))
        .collect();
    (TrustedKeys::read(&paths).unwrap(), paths)
}

fn layer(key: &SigningKey, payload: Vec<u8>) -> SignatureLayer {
    let signature = key.sign(&payload);
    SignatureLayer { payload, signature }
}

/// Runs `openssl` in `dir`, fails the test with its stderr if it fails, returns its stdout.
fn openssl(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command-line tool runs (Debian's `openssl` package)");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn signature_tag_and_payload_are_as_cosign_writes_them() {
    assert_eq!(signature_tag("sha256:abc123"), "sha256-abc123.sig".to_owned());
    let payload: serde_json::Value = serde_json::from_slice(&payload(REFERENCE, DIGEST)).unwrap();
    let expected = serde_json::json!({
        "critical": {
            "identity": {"docker-reference": REFERENCE},
            "image": {"docker-manifest-digest": DIGEST},
            "type": "cosign container image signature"
        },
        "optional": null
    });
    assert_eq!(payload, expected);
}

#[test]
fn a_signature_by_a_trusted_key_verifies_and_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = (SigningKey::random().unwrap(), SigningKey::random().unwrap());
    let (trusted, paths) = trusting(dir.path(), &[&theirs, &ours]);
    let signer = trusted.verify(DIGEST, &[layer(&ours, payload(REFERENCE, DIGEST))]).unwrap();
    assert_eq!(signer.key, paths[1]);
    assert_eq!(signer.docker_reference, REFERENCE);
    assert!(signer.fingerprint.starts_with("sha256:") && signer.fingerprint.len() == 71);
}

#[test]
fn a_signature_by_another_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (trusted_key, stranger) = (SigningKey::random().unwrap(), SigningKey::random().unwrap());
    let (trusted, paths) = trusting(dir.path(), &[&trusted_key]);
    let err = trusted.verify(DIGEST, &[layer(&stranger, payload(REFERENCE, DIGEST))]).unwrap_err();
    assert!(matches!(err, SignatureError::NotSignedByTrustedKey { .. }), "{err}");
    assert!(err.to_string().contains(&paths[0].display().to_string()), "{err}");
}

#[test]
fn a_trusted_signature_over_another_digest_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let key = SigningKey::random().unwrap();
    let (trusted, _) = trusting(dir.path(), &[&key]);
    let err = trusted.verify(DIGEST, &[layer(&key, payload(REFERENCE, OTHER_DIGEST))]).unwrap_err();
    assert_eq!(
        err,
        SignatureError::PayloadForAnotherDigest {
            digest: DIGEST.to_owned(),
            layer: 0,
            signed: OTHER_DIGEST.to_owned()
        }
    );
}

#[test]
fn a_tampered_payload_or_signature_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let key = SigningKey::random().unwrap();
    let (trusted, _) = trusting(dir.path(), &[&key]);
    let good = layer(&key, payload(REFERENCE, DIGEST));

    let mut tampered = good.clone();
    tampered.payload =
        String::from_utf8(tampered.payload).unwrap().replace(REFERENCE, "registry.example/evil").into_bytes();
    let err = trusted.verify(DIGEST, &[tampered]).unwrap_err();
    assert!(matches!(err, SignatureError::NotSignedByTrustedKey { .. }), "{err}");

    // A signature over the same payload by the same key, one bit changed.
    let mut der = BASE64.decode(&good.signature).unwrap();
    let last = der.len() - 1;
    der[last] ^= 1;
    let flipped = SignatureLayer { payload: good.payload.clone(), signature: BASE64.encode(&der) };
    let err = trusted.verify(DIGEST, &[flipped]).unwrap_err();
    assert!(matches!(err, SignatureError::NotSignedByTrustedKey { .. }), "{err}");

    let not_base64 = SignatureLayer { payload: good.payload.clone(), signature: "%%%".to_owned() };
    let err = trusted.verify(DIGEST, &[not_base64]).unwrap_err();
    assert!(matches!(err, SignatureError::MalformedBase64 { layer: 0, .. }), "{err}");

    let not_der = SignatureLayer { payload: good.payload, signature: BASE64.encode(b"not DER") };
    let err = trusted.verify(DIGEST, &[not_der]).unwrap_err();
    assert!(matches!(err, SignatureError::MalformedSignature { layer: 0, .. }), "{err}");
}

#[test]
fn a_trusted_signature_over_a_payload_of_another_kind_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let key = SigningKey::random().unwrap();
    let (trusted, _) = trusting(dir.path(), &[&key]);
    let other_type = String::from_utf8(payload(REFERENCE, DIGEST))
        .unwrap()
        .replace(PAYLOAD_TYPE, "something else")
        .into_bytes();
    let err = trusted.verify(DIGEST, &[layer(&key, other_type)]).unwrap_err();
    assert!(matches!(err, SignatureError::WrongPayloadType { .. }), "{err}");
    let err = trusted.verify(DIGEST, &[layer(&key, b"[1,2]".to_vec())]).unwrap_err();
    assert!(matches!(err, SignatureError::MalformedPayload { .. }), "{err}");
}

#[test]
fn no_layers_is_no_signature_and_one_good_layer_among_bad_ones_passes() {
    let dir = tempfile::tempdir().unwrap();
    let (key, stranger) = (SigningKey::random().unwrap(), SigningKey::random().unwrap());
    let (trusted, _) = trusting(dir.path(), &[&key]);
    assert_eq!(
        trusted.verify(DIGEST, &[]).unwrap_err(),
        SignatureError::NoSignature { digest: DIGEST.to_owned() }
    );
    let by_stranger = layer(&stranger, payload(REFERENCE, DIGEST));
    let moved = layer(&key, payload(REFERENCE, OTHER_DIGEST));
    let good = layer(&key, payload(REFERENCE, DIGEST));
    // Without the good layer, the most telling refusal wins: a trusted key's signature moved
    // from another artifact, at its index.
    let err = trusted.verify(DIGEST, &[by_stranger.clone(), moved.clone()]).unwrap_err();
    assert!(matches!(err, SignatureError::PayloadForAnotherDigest { layer: 1, .. }), "{err}");
    assert!(trusted.verify(DIGEST, &[by_stranger, moved, good]).is_ok());
}

#[test]
fn our_encrypted_key_reads_back_with_its_password_only() {
    let key = SigningKey::random().unwrap();
    let pem = key.to_cosign_pem_with_cost(b"correct horse", 10).unwrap();
    assert!(pem.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"), "{pem}");
    let read = SigningKey::from_pem(&pem, || Some(b"correct horse".to_vec())).unwrap();
    assert_eq!(read.public_key_pem(), key.public_key_pem());
    let err = SigningKey::from_pem(&pem, || Some(b"wrong".to_vec())).err().unwrap();
    assert!(err.to_string().contains("COSIGN_PASSWORD is wrong"), "{err}");
}

#[test]
fn generate_writes_a_cosign_key_pair_that_signs_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let (private, public) = generate(b"").unwrap();
    let key = SigningKey::from_pem(&private, || Some(Vec::new())).unwrap();
    let trusted = TrustedKeys::read(&[write(dir.path(), "cosign.pub", &public)]).unwrap();
    trusted.verify(DIGEST, &[layer(&key, payload(REFERENCE, DIGEST))]).unwrap();
}

/// The key file `cosign generate-key-pair` (Go) wrote with an empty password (scrypt N=2^16),
/// kept as test data by sigstore-rs (Apache-2.0): an independent writer of the format.
#[test]
fn a_key_written_by_cosign_itself_reads_and_signs() {
    let pem = include_str!("testdata/cosign-generated-empty-password.key");
    let key = SigningKey::from_pem(pem, || Some(Vec::new())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let trusted = TrustedKeys::read(&[write(dir.path(), "cosign.pub", &key.public_key_pem())]).unwrap();
    trusted.verify(DIGEST, &[layer(&key, payload(REFERENCE, DIGEST))]).unwrap();
    assert!(SigningKey::from_pem(pem, || Some(b"x".to_vec())).is_err());
}

#[test]
fn openssl_key_files_load_and_their_fingerprint_is_the_sha256_of_the_spki() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    openssl(d, &["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "pkcs8.pem"]);
    openssl(d, &["ec", "-in", "pkcs8.pem", "-pubout", "-out", "key.pub"]);
    openssl(d, &["ec", "-in", "pkcs8.pem", "-out", "sec1.pem"]);
    openssl(d, &["ecparam", "-name", "prime256v1", "-genkey", "-out", "with-params.pem"]);
    let spki = openssl(d, &["pkey", "-pubin", "-in", "key.pub", "-outform", "DER"]);
    std::fs::write(d.join("key.der"), &spki).unwrap();
    let sha = String::from_utf8(openssl(d, &["dgst", "-sha256", "-r", "key.der"])).unwrap();
    let expected = format!("sha256:{}", sha.split_whitespace().next().unwrap());

    let trusted = TrustedKeys::read(&[d.join("key.pub")]).unwrap();
    for private in ["pkcs8.pem", "sec1.pem"] {
        let key = SigningKey::read(&d.join(private)).unwrap();
        let signer = trusted.verify(DIGEST, &[layer(&key, payload(REFERENCE, DIGEST))]).unwrap();
        assert_eq!(signer.fingerprint, expected, "{private}");
    }
    SigningKey::read(&d.join("with-params.pem")).unwrap();
    assert!(std::fs::read_to_string(d.join("sec1.pem")).unwrap().contains("EC PRIVATE KEY"));
}

#[test]
fn openssl_signatures_verify_here_and_ours_verify_with_openssl() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    openssl(d, &["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "key.pem"]);
    openssl(d, &["ec", "-in", "key.pem", "-pubout", "-out", "key.pub"]);
    let trusted = TrustedKeys::read(&[d.join("key.pub")]).unwrap();
    std::fs::write(d.join("payload.json"), payload(REFERENCE, DIGEST)).unwrap();
    // openssl's ECDSA nonces are random, so several signatures cover both halves of `s`.
    for _ in 0..6 {
        let der = {
            openssl(d, &["dgst", "-sha256", "-sign", "key.pem", "-out", "sig.der", "payload.json"]);
            std::fs::read(d.join("sig.der")).unwrap()
        };
        let signed = SignatureLayer { payload: payload(REFERENCE, DIGEST), signature: BASE64.encode(der) };
        trusted.verify(DIGEST, &[signed]).unwrap();
    }

    let ours = SigningKey::read(&d.join("key.pem")).unwrap();
    std::fs::write(d.join("ours.pub"), ours.public_key_pem()).unwrap();
    std::fs::write(d.join("ours.sig"), BASE64.decode(ours.sign(&payload(REFERENCE, DIGEST))).unwrap())
        .unwrap();
    let out =
        openssl(d, &["dgst", "-sha256", "-verify", "ours.pub", "-signature", "ours.sig", "payload.json"]);
    assert_eq!(String::from_utf8_lossy(&out).trim(), "Verified OK");
    // And openssl refuses it for another payload, so the check above means something.
    std::fs::write(d.join("other.json"), payload(REFERENCE, OTHER_DIGEST)).unwrap();
    let refused = Command::new("openssl")
        .args(["dgst", "-sha256", "-verify", "ours.pub", "-signature", "ours.sig", "other.json"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(!refused.status.success());
}
