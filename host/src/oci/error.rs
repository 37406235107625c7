//! Why a plugin from a registry was not pinned, fetched or run: each names the reference
//! and, where one is at stake, the digest, and says what to do.

use std::path::PathBuf;

/// A failure of the OCI layer; callers branch on pinning and trust failures.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error("`{reference}` is not a reference to a plugin artifact: {detail}; write REGISTRY/REPOSITORY:TAG")]
    BadReference { reference: String, detail: String },
    #[error(
        "oci \"{reference}\" is not pinned in {}: run `agent-host plugin add {reference}` to pin it",
        lock.display()
    )]
    NotPinned { reference: String, lock: PathBuf },
    #[error("{} cannot be read: {detail}", path.display())]
    Lock { path: PathBuf, detail: String },
    #[error(
        "oci \"{reference}\" declares grants its [plugin.grants] does not give; add {}",
        missing.iter().map(|grant| format!("`{grant}`")).collect::<Vec<_>>().join(", ")
    )]
    GrantsMissing { reference: String, missing: Vec<String> },
    #[error(
        "oci \"{reference}\": the layer fetched has digest {actual}, not the pinned {expected}; it was \
         not run (the registry's copy was altered or damaged)"
    )]
    DigestMismatch { reference: String, expected: String, actual: String },
    #[error("oci \"{reference}\": the registry could not be used: {detail}")]
    Registry { reference: String, detail: String },
    #[error("oci \"{reference}\" is not an agent-host plugin artifact: {detail}")]
    NotAPlugin { reference: String, detail: String },
    #[error("oci \"{reference}\" at {digest} is refused by the trust policy: {detail}")]
    Untrusted { reference: String, digest: String, detail: String },
    #[error("the plugin cache at {} cannot be used: {detail}", path.display())]
    Cache { path: PathBuf, detail: String },
}
