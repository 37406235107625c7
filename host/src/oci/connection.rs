//! A connection to the registry a reference names: plain HTTP to a loopback address (a local
//! registry) or one the config calls insecure, HTTPS to any other; logged in as
//! `credentials` finds.

use std::net::IpAddr;
use std::str::FromStr;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

use super::credentials::auth_for;
use super::error::OciError;
use crate::config::RegistryConfig;

/// A client for one reference's registry, and the login to use there.
pub struct Connection {
    pub client: Client,
    pub auth: RegistryAuth,
    /// The reference, parsed.
    pub reference: Reference,
    /// As the config spells it, for errors.
    pub written: String,
}

impl Connection {
    /// A client for `reference`'s registry, as `[plugins.registries]` (`registries`) says.
    pub fn open(reference: &str, registries: &RegistryConfig) -> Result<Self, OciError> {
        let parsed = parse(reference)?;
        let registry = parsed.registry().to_owned();
        let settings = registries.registries.get(&registry).cloned().unwrap_or_default();
        let protocol = if settings.insecure || is_loopback(&registry) {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        };
        install_tls_provider();
        let client = Client::new(ClientConfig {
            protocol,
            connect_timeout: Some(std::time::Duration::from_secs(10)),
            read_timeout: Some(std::time::Duration::from_secs(60)),
            user_agent: concat!("agent-host/", env!("CARGO_PKG_VERSION")),
            ..ClientConfig::default()
        });
        let auth = auth_for(&registry, &settings)
            .map_err(|detail| OciError::Registry { reference: reference.to_owned(), detail })?;
        Ok(Self { client, auth, reference: parsed, written: reference.to_owned() })
    }

    /// The same repository at `digest`.
    pub fn at_digest(&self, digest: &str) -> Reference {
        self.reference.clone_with_digest(digest.to_owned())
    }

    /// The same repository at `tag`.
    pub fn at_tag(&self, tag: &str) -> Reference {
        Reference::with_tag(
            self.reference.registry().to_owned(),
            self.reference.repository().to_owned(),
            tag.to_owned(),
        )
    }

    /// A registry failure, as the error for this reference.
    pub fn failed(&self, what: &str, error: impl std::fmt::Display) -> OciError {
        OciError::Registry { reference: self.written.clone(), detail: format!("{what}: {error}") }
    }
}

/// `REGISTRY/REPOSITORY:TAG` parsed; a reference without a registry host is refused, since a
/// default registry would be a guess.
pub fn parse(reference: &str) -> Result<Reference, OciError> {
    let bad = |detail: String| OciError::BadReference { reference: reference.to_owned(), detail };
    let first = reference.split('/').next().unwrap_or_default();
    if !reference.contains('/') || !(first.contains('.') || first.contains(':') || first == "localhost") {
        return Err(bad("it names no registry host".into()));
    }
    Reference::from_str(reference).map_err(|error| bad(error.to_string()))
}

/// Whether `registry` (`HOST`, `HOST:PORT`, `[V6]:PORT`) is on this machine.
pub fn is_loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => registry.rsplit_once(':').map_or(registry, |(host, _)| host),
    };
    host == "localhost" || IpAddr::from_str(host).is_ok_and(|ip| ip.is_loopback())
}

/// The process's TLS provider (ring, as the model client uses), installed once before the
/// first client: the host's reqwest is built without one of its own.
fn install_tls_provider() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // Another part of the process may have installed one first; that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_registries_are_told_apart_from_remote_ones() {
        for local in ["127.0.0.1:5000", "localhost:5000", "[::1]:5000", "localhost", "127.0.0.2"] {
            assert!(is_loopback(local), "{local}");
        }
        for remote in ["registry.example.com", "10.0.0.1:5000", "example.com:443"] {
            assert!(!is_loopback(remote), "{remote}");
        }
    }

    #[test]
    fn a_reference_must_name_its_registry() {
        assert!(parse("127.0.0.1:5000/plugins/triage:1").is_ok());
        let error = parse("triage:1").unwrap_err().to_string();
        assert!(error.contains("triage:1") && error.contains("registry"), "{error}");
    }
}
