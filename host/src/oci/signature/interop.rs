//! The module's side of `scripts/check-signature-interop.sh`, which runs these ignored tests
//! one at a time between skopeo and registry steps, through files in `$SIGNATURE_INTEROP_DIR`:
//! `generate_key` writes `cosign.key` (password from the file `password`) and `cosign.pub`;
//! `verify_external` checks the layer `payload-in` + `signature-in` against `cosign.pub` for the
//! digest in `digest-in`; `sign_for_external` signs the digest in `digest-out` for the
//! reference in `reference-out` with `cosign.key` (password from `COSIGN_PASSWORD`, as a user
//! would) into `payload-out` + `signature-out`.

use std::path::PathBuf;

use super::*;

fn dir() -> PathBuf {
    std::env::var_os("SIGNATURE_INTEROP_DIR")
        .map(PathBuf::from)
        .expect("SIGNATURE_INTEROP_DIR is set (run scripts/check-signature-interop.sh)")
}

fn read(name: &str) -> String {
    let path = dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).trim().to_owned()
}

#[test]
#[ignore = "a step of scripts/check-signature-interop.sh"]
fn generate_key() {
    let (private, public) = generate(read("password").as_bytes()).unwrap();
    std::fs::write(dir().join("cosign.key"), private).unwrap();
    std::fs::write(dir().join("cosign.pub"), public).unwrap();
}

#[test]
#[ignore = "a step of scripts/check-signature-interop.sh"]
fn verify_external() {
    let trusted = TrustedKeys::read(&[dir().join("cosign.pub")]).unwrap();
    let layer = SignatureLayer {
        payload: std::fs::read(dir().join("payload-in")).unwrap(),
        signature: read("signature-in"),
    };
    let signer = trusted.verify(&read("digest-in"), &[layer]).unwrap();
    println!("verified: {signer:?}");
}

#[test]
#[ignore = "a step of scripts/check-signature-interop.sh"]
fn sign_for_external() {
    let key = SigningKey::read(&dir().join("cosign.key")).unwrap();
    let payload = payload(&read("reference-out"), &read("digest-out"));
    std::fs::write(dir().join("signature-out"), key.sign(&payload)).unwrap();
    std::fs::write(dir().join("payload-out"), payload).unwrap();
}
