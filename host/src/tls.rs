//! The TLS every outbound HTTPS client of the host speaks — the model endpoint, MCP servers
//! over HTTP, the OTLP exporter: ring, and the webpki roots, so the trust is the same on every
//! machine and no system store is read. (A plugin registry is the exception: it trusts the
//! system's roots and its own `ca_file`, since private registries are the common case; see
//! `oci::connection`.)

/// A client configuration with ring and the webpki roots.
pub fn client_config() -> rustls::ClientConfig {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    rustls::ClientConfig::builder_with_provider(rustls::crypto::ring::default_provider().into())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth()
}
