//! `[telemetry]`: OpenTelemetry traces, off unless an OTLP endpoint is named.

use serde::Deserialize;

use super::{Config, ConfigError};

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// Where traces go over OTLP/HTTP (protobuf): the collector's base URL, such as
    /// `http://127.0.0.1:4318`; spans are posted to its `/v1/traces`. Unset: no traces.
    pub otlp_endpoint: Option<String>,
    /// The `service.name` the traces carry; `agent-host` when unset.
    pub service_name: Option<String>,
    /// Whether spans carry what was said (prompts, replies, tool arguments and results). Off:
    /// they carry sizes, names and ids only, since a trace store is rarely as guarded as the
    /// session store.
    pub capture_content: bool,
}

impl TelemetryConfig {
    /// The URL spans are posted to, when traces are on.
    pub fn traces_url(&self) -> Option<String> {
        self.otlp_endpoint.as_ref().map(|base| format!("{}/v1/traces", base.trim_end_matches('/')))
    }

    pub fn service_name(&self) -> &str {
        self.service_name.as_deref().unwrap_or("agent-host")
    }
}

/// What serde cannot check of `[telemetry]`.
pub(super) fn check(config: &Config) -> Result<(), ConfigError> {
    let Some(endpoint) = &config.telemetry.otlp_endpoint else { return Ok(()) };
    let parsed: Result<hyper::Uri, _> = endpoint.parse();
    let fine = parsed
        .as_ref()
        .is_ok_and(|uri| matches!(uri.scheme_str(), Some("http" | "https")) && uri.host().is_some());
    if fine {
        return Ok(());
    }
    Err(config.error(
        "telemetry.otlp_endpoint",
        format!("`{endpoint}` is not an http:// or https:// URL (the collector's OTLP/HTTP base)"),
    ))
}
