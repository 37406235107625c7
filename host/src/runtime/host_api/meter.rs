//! `meter.read` (contract 0.2.6): what the call's turn had spent when the call began.

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
}
