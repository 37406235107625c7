//! Logs and OpenTelemetry traces: the subscriber every run mode installs once the config is
//! read. Logs go to stderr as before; with `[telemetry] otlp_endpoint` the spans of
//! [`agent_host::telemetry`] are exported too, over OTLP/HTTP from a background thread, batched.
//! Without it no such span is even built: their target is enabled by the exporting layer only.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use agent_host::config::TelemetryConfig;

/// How long one export of a batch of spans may take.
const EXPORT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What exports traces while the process runs; [`Telemetry::finish`] sends what is still
/// batched.
#[must_use = "finish it to send the last spans"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

/// Installs the process's subscriber: logs at the level `verbose` (or `RUST_LOG`) asks, and
/// the spans of [`agent_host::telemetry`] to the collector `config` names, if it names one.
pub fn init(verbose: u8, config: &TelemetryConfig) -> Telemetry {
    let default = match verbose {
        0 => "warn",
        1 => "info,agent_host=debug",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(super::above_prompt::LogOutput)
        .with_ansi(log_colors(
            std::io::IsTerminal::is_terminal(&std::io::stderr()),
            std::env::var_os("NO_COLOR"),
        ))
        .with_filter(filter);
    let registry = tracing_subscriber::registry().with(logs);
    agent_host::telemetry::capture_content(config.capture_content);
    let Some(url) = config.traces_url() else {
        let _ = registry.try_init();
        return Telemetry { provider: None };
    };
    // The exporter sends from a thread of its own, so its client blocks; it speaks TLS as the
    // model client does. A blocking client starts a runtime of its own, which may not happen
    // on an async thread: it is built on a plain one.
    let client = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                reqwest::blocking::Client::builder()
                    .use_preconfigured_tls(agent_host::tls::client_config())
                    .timeout(EXPORT_TIMEOUT)
                    .build()
            })
            .join()
            .expect("building a client does not panic")
    });
    let exporter = client.map_err(|error| error.to_string()).and_then(|client| {
        opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(&url)
            .build()
            .map_err(|error| error.to_string())
    });
    let exporter = match exporter {
        Ok(exporter) => exporter,
        Err(error) => {
            let _ = registry.try_init();
            tracing::warn!(%error, url, "traces are off: the OTLP exporter could not be built");
            return Telemetry { provider: None };
        }
    };
    let resource = Resource::builder().with_service_name(config.service_name().to_owned()).build();
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
    let traces = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("agent-host"))
        .with_filter(Targets::new().with_target(agent_host::telemetry::TARGET, LevelFilter::INFO));
    let _ = registry.with(traces).try_init();
    Telemetry { provider: Some(provider) }
}

/// Whether log lines are coloured: as the console's own output, only on a terminal and never
/// with `NO_COLOR` set — a log piped to a file or another program would otherwise carry the
/// escape codes as text.
fn log_colors(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none()
}

impl Telemetry {
    /// Sends the spans still batched and stops the export. Off the async threads: the
    /// exporter's blocking client may not be dropped on them.
    pub async fn finish(mut self) {
        let Some(provider) = self.provider.take() else { return };
        let shut = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        if let Ok(Err(error)) = shut {
            eprintln!("warning: the last traces were not all sent: {error}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_are_coloured_only_at_a_terminal_without_no_color() {
        assert!(log_colors(true, None));
        assert!(!log_colors(false, None), "piped");
        assert!(!log_colors(true, Some("1".into())), "NO_COLOR");
    }
}
