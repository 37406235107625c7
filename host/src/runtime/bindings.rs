//! Host-side bindings generated from `wit/plugin.wit`. Kept apart so the generated names
//! never leak past the runtime module.

wasmtime::component::bindgen!({
    world: "plugin",
    path: "../wit",
    // Calls run on the caller's async task (a fiber per call): WASI I/O stays async and no
    // call hops threads. The host's own imports are quick and stay synchronous, except
    // running a process, which waits on the child without blocking the thread.
    // The imports through which a plugin makes the host hold data may trap: a call over
    // one of its host-side caps ends there (see `caps.rs`).
    exports: { default: async },
    imports: {
        "agent-host:plugin/process.run": async,
        "agent-host:plugin/state.set": trappable,
        "agent-host:plugin/events.emit": trappable,
        "agent-host:plugin/log.write": trappable,
    },
});

pub use self::agent_host::plugin::types;
