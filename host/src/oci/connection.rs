//! A connection to the registry a reference names: plain HTTP to a loopback address (a local
//! registry) or one the config calls insecure, HTTPS to any other — trusting the system's
//! certificate authorities and the registry's own `ca_file`; logged in as `credentials` finds.

use std::net::IpAddr;
use std::str::FromStr;

use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
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
    /// Whether it speaks HTTPS (else plain HTTP), for errors.
    over_https: bool,
}

impl Connection {
    /// A client for `reference`'s registry, as `[plugins.registries]` (`registries`) says.
    pub fn open(reference: &str, registries: &RegistryConfig) -> Result<Self, OciError> {
        let parsed = parse(reference)?;
        let registry = parsed.registry().to_owned();
        let settings = registries.registries.get(&registry).cloned().unwrap_or_default();
        let over_https = !(settings.insecure || is_loopback(&registry));
        let protocol = if over_https { ClientProtocol::Https } else { ClientProtocol::Http };
        install_tls_provider();
        let extra_root_certificates = match &settings.ca_file {
            Some(file) => ca_certificates(file.get_ref())
                .map_err(|detail| OciError::Registry { reference: reference.to_owned(), detail })?,
            None => Vec::new(),
        };
        let client = Client::new(ClientConfig {
            protocol,
            extra_root_certificates,
            connect_timeout: Some(std::time::Duration::from_secs(10)),
            read_timeout: Some(std::time::Duration::from_secs(60)),
            user_agent: concat!("agent-host/", env!("CARGO_PKG_VERSION")),
            ..ClientConfig::default()
        });
        let auth = auth_for(&registry, &settings)
            .map_err(|detail| OciError::Registry { reference: reference.to_owned(), detail })?;
        Ok(Self { client, auth, reference: parsed, written: reference.to_owned(), over_https })
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

    /// A registry failure while doing `what`, as the error for this reference: every cause
    /// named, and, when the registry could not be reached over HTTPS, the two settings that
    /// make it reachable.
    pub fn failed(&self, what: &str, error: &(dyn std::error::Error + 'static)) -> OciError {
        let mut detail = format!("{what}: {}", causes(error));
        if self.over_https && unreached(error) {
            detail.push_str(&format!(
                " — it is spoken to over HTTPS, as a registry off this machine is: for one with its \
                 own certificate authority set `ca_file`, for one speaking plain HTTP `insecure = true`, \
                 under [plugins.registries.\"{}\"]",
                self.reference.registry()
            ));
        }
        OciError::Registry { reference: self.written.clone(), detail }
    }
}

/// `error` and its sources, each once (a wrapper that repeats its source's text is skipped).
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut texts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(error) = next {
        let text = error.to_string();
        if !texts.last().is_some_and(|last| last.ends_with(&text)) {
            texts.push(text);
        }
        next = error.source();
    }
    texts.join(": ")
}

/// Whether `error` is the request never getting an answer (no connection, no TLS session),
/// rather than the registry answering no.
fn unreached(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        // The client's own error wraps reqwest's transparently: its sources skip it.
        let request = match error.downcast_ref::<OciDistributionError>() {
            Some(OciDistributionError::RequestError(request)) => Some(request),
            _ => error.downcast_ref::<reqwest::Error>(),
        };
        if let Some(request) = request {
            return request.is_connect() || request.is_request();
        }
        next = error.source();
    }
    false
}

/// The certificate authorities of `[plugins.registries."HOST"] ca_file`, trusted beside the
/// system's.
fn ca_certificates(file: &std::path::Path) -> Result<Vec<Certificate>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let bad = |error: rustls::pki_types::pem::Error| format!("its ca_file {}: {error}", file.display());
    let certificates = CertificateDer::pem_file_iter(file)
        .map_err(bad)?
        .map(|certificate| {
            certificate.map(|der| Certificate { encoding: CertificateEncoding::Der, data: der.to_vec() })
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    if certificates.is_empty() {
        return Err(format!("its ca_file {} holds no certificate", file.display()));
    }
    Ok(certificates)
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

    /// An error whose text may repeat its source's, as a transparent wrapper's does.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|layer| layer as _)
        }
    }

    #[test]
    fn an_errors_causes_are_each_named_once_and_a_non_request_error_is_no_transport_failure() {
        let chain = Layer(
            "error sending request",
            Some(Box::new(Layer(
                "client error (Connect)",
                Some(Box::new(Layer("client error (Connect)", None))),
            ))),
        );
        assert_eq!(causes(&chain), "error sending request: client error (Connect)");
        assert!(!unreached(&chain), "no reqwest error in it: the registry answered");
    }

    #[test]
    fn a_reference_must_name_its_registry() {
        assert!(parse("127.0.0.1:5000/plugins/triage:1").is_ok());
        let error = parse("triage:1").unwrap_err().to_string();
        assert!(error.contains("triage:1") && error.contains("registry"), "{error}");
    }
}
