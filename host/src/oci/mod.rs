//! Plugins as OCI artifacts: the Wasm OCI layout, pulled and pushed with `oci-client`, pinned
//! in `plugins.lock`, verified against their digest and, under a key policy, their signature.

pub mod signature;
