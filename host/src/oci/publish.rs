//! Publishing a plugin: its component pushed in the Wasm OCI layout (as `wkg oci push`
//! writes it), the manifest annotated with what the plugin needs.

use oci_wasm::{WasmClient, WasmConfig};

use super::annotations::PluginAnnotations;
use super::artifact::sha256_digest;
use super::connection::Connection;
use super::error::OciError;
use crate::config::RegistryConfig;

/// What a push made.
#[derive(Debug, Clone)]
pub struct Published {
    /// The manifest's digest, as the registry names it.
    pub manifest_digest: String,
    /// The component layer's digest.
    pub layer_digest: String,
}

/// `component` pushed to `reference` with `annotations` on its manifest.
pub async fn publish(
    reference: &str,
    component: Vec<u8>,
    annotations: &PluginAnnotations,
    registries: &RegistryConfig,
) -> Result<Published, OciError> {
    let layer_digest = sha256_digest(&component);
    let (wasm_config, layer) = WasmConfig::from_raw_component(component, None).map_err(|error| {
        OciError::NotAPlugin { reference: reference.to_owned(), detail: format!("its component: {error:#}") }
    })?;
    let connection = Connection::open(reference, registries)?;
    let (parsed, auth) = (&connection.reference, &connection.auth);
    let wasm = WasmClient::new(connection.client.clone());
    wasm.push(parsed, auth, layer, wasm_config, Some(annotations.to_map()))
        .await
        .map_err(|error| connection.failed("pushing", error.as_ref()))?;
    let manifest_digest = wasm
        .fetch_manifest_digest(parsed, auth)
        .await
        .map_err(|error| connection.failed("reading back the manifest's digest", &error))?;
    Ok(Published { manifest_digest, layer_digest })
}
