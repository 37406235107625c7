//! The host's imports. In a component they are the real ones; built natively (unit tests)
//! they are the in-memory stand-ins of [`testing`](crate::testing), so plugin logic that
//! reads state or emits events runs under `cargo test`.

#[cfg(target_arch = "wasm32")]
pub(crate) use crate::bindings::agent_host::plugin::{
    agents, edits, events, history, hook_filter, log, meter, model, process, reuse, state, tools,
};
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use crate::testing::fake::{
    agents, edits, events, history, hook_filter, log, meter, model, process, reuse, state, tools,
};
