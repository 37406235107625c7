//! Plugins as OCI artifacts: the Wasm OCI layout, pulled and pushed with `oci-client`, pinned
//! in `plugins.lock`, verified against their digest and, under a key policy, their signature.
//!
//! A plugin's manifest carries what a host must know before running it ([`annotations`]):
//! the contract version, the exports and the grants it declares ([`DeclaredGrants`]). So the
//! host checks those grants against the entry's `[plugin.grants]` before fetching a blob, and
//! checks the blob against the pinned digest before anything compiles it.

pub mod annotations;
mod artifact;
mod cache;
mod connection;
mod credentials;
mod declared_grants;
mod error;
mod folder_grants;
mod load;
mod lock;
mod pin;
mod publish;
pub mod signature;
mod signatures;
mod trust;

pub use annotations::PluginAnnotations;
pub use artifact::sha256_digest;
pub use connection::is_loopback;
pub use declared_grants::{DeclaredDir, DeclaredGrants};
pub use error::OciError;
pub use folder_grants::declared_in_folder;
pub use load::{component_of, fetched};
pub use lock::{LockedPlugin, Lockfile, UNSIGNED};
pub use pin::resolve;
pub use publish::{Published, publish};
pub use signatures::sign;
