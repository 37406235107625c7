//! How a call into a plugin failed: the one classification of a failed call, from what
//! its store saw (the memory limiter, the host-side caps, the guest's stderr) and the
//! error wasmtime returned.

use wasmtime::Trap;

use super::call::CallState;

/// How a call into a plugin failed; its message follows the plugin's name (see
/// `crate::plugins::PluginError`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum PluginFailure {
    #[error("timed out after {timeout_ms} ms")]
    Timeout { timeout_ms: u64 },
    #[error("hit its memory limit of {limit_mb} MiB")]
    MemoryLimit { limit_mb: u32 },
    #[error("panicked: {message}")]
    Panic { message: String },
    #[error("trapped: {detail}")]
    Trap { detail: String },
    #[error("returned malformed output: {detail}")]
    Malformed { detail: String },
    #[error("could not be instantiated: {detail}")]
    Instantiate { detail: String },
    /// A host-side cap (`[runtime.limits]`): `detail` names it and its config key.
    #[error("{detail}; nothing of the call was kept")]
    OverCap { cap: &'static str, detail: String },
}

impl PluginFailure {
    /// The kind of failure, in a word that never varies with the details (a trace's
    /// `agent_host.plugin.outcome`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Timeout { .. } => "timeout",
            Self::MemoryLimit { .. } => "memory_limit",
            Self::Panic { .. } => "panic",
            Self::Trap { .. } => "trap",
            Self::Malformed { .. } => "malformed",
            Self::Instantiate { .. } => "instantiate",
            Self::OverCap { .. } => "over_cap",
        }
    }

    /// What stands between the plugin's name and this message: a cap's detail is a
    /// sentence of its own, not something the plugin did.
    pub(crate) fn separator(&self) -> &'static str {
        match self {
            Self::OverCap { .. } => ": ",
            _ => " ",
        }
    }

    /// What a call given `timeout_ms` that ran out of time failed with.
    pub(crate) fn timed_out(timeout_ms: u64) -> Self {
        Self::Timeout { timeout_ms }
    }

    /// What a call ended with, its store's final `state` and the `result` the export
    /// returned: the value, or how the call failed.
    pub(crate) fn classify<R>(state: &CallState, result: wasmtime::Result<R>) -> Result<R, Self> {
        if let Some(detail) = state.mount_error.clone() {
            // The call ran without a folder it was granted: whatever it returned is suspect.
            return Err(Self::Instantiate { detail });
        }
        result.map_err(|error| Self::of_error(state, error))
    }

    fn of_error(state: &CallState, error: wasmtime::Error) -> Self {
        if state.memory.hit() {
            return Self::MemoryLimit { limit_mb: (state.memory.max_bytes() >> 20) as u32 };
        }
        if let Some(over) = state.caps.hit() {
            return Self::OverCap { cap: over.cap.key(), detail: state.caps.describe(over) };
        }
        let stderr = state.stderr_text();
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => Self::timed_out(state.deadline.ms()),
            Some(trap) => match panic_message(&stderr) {
                Some(message) => Self::Panic { message },
                None if stderr.is_empty() => Self::Trap { detail: trap.to_string() },
                None => Self::Trap { detail: format!("{trap} (stderr: {stderr})") },
            },
            // Not a trap: the call returned, but its result could not be read (invalid
            // UTF-8, out-of-bounds pointers) — the plugin broke the contract.
            None => Self::Malformed { detail: format!("{error:#}") },
        }
    }
}

/// The message of a Rust panic, as the guest's std printed it to stderr.
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.find("panicked at ")?;
    let rest = &stderr[start..];
    // "panicked at src/lib.rs:12:5:\nthe message\nnote: run with ..."
    let message = rest.split_once('\n').map(|(_, message)| message).unwrap_or(rest);
    let message = message.split("\nnote:").next().unwrap_or(message).trim();
    Some(if message.is_empty() { rest.trim().to_owned() } else { message.to_owned() })
}
