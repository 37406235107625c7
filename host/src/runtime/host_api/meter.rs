//! `meter.read` (contract 0.2.6) and `meter.session` (0.2.7): what the call's turn and its
//! session had spent when the call began.

/// The host's meter as a plugin reads it: the running turn's spending and the deployment's
/// caps on one turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MeterReading {
    pub turn_tokens: u64,
    pub turn_model_calls: u32,
    pub turn_ms: u64,
    pub turn_continuations: u32,
    pub max_iterations: u32,
    pub max_turn_tokens: Option<u64>,
    pub max_turn_secs: Option<u64>,
    pub max_continuations: Option<u32>,
    /// Every token the session's model calls and its plugins' model calls spent.
    pub session_tokens: u64,
    pub session_model_calls: u64,
}
