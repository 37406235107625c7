use std::collections::BTreeMap;
use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::caps::CallCaps;
use super::deadline::Deadline;
use super::declarations::Declarations;
use super::limiter::MemoryCap;
use crate::events::Payload;
use crate::state::StateBag;

/// Bytes of a guest's stderr kept per call: enough for a panic message.
const STDERR_CAPACITY: usize = 8 * 1024;

/// A plugin's grant to run processes: where they run, what they see, how they are confined.
#[derive(Debug)]
pub struct ProcessGrant {
    /// The first writable granted folder, on the host; `None` refuses every run.
    pub(crate) workdir: Option<std::path::PathBuf>,
    /// Names of the host environment variables passed on.
    pub(crate) env: Vec<String>,
    /// The granted folders (host path, writable), shown to the process at their host paths.
    pub(crate) folders: Vec<(std::path::PathBuf, bool)>,
    pub(crate) network: bool,
    pub(crate) rlimits: crate::sandbox::Rlimits,
    pub(crate) sandbox: crate::sandbox::Sandbox,
    /// The plugin's `limits.max_output_kb` in bytes: a call cannot return more text than
    /// that, so the host keeps no more of a process's output, whatever the plugin asks.
    pub(crate) max_output_bytes: u64,
}

/// The plugin a call runs, as the host imports name it in errors and log lines.
#[derive(Debug)]
pub struct CallingPlugin {
    /// The plugin's name: also its state namespace.
    pub name: String,
    /// `name@version`.
    pub label: String,
}

impl std::fmt::Display for CallingPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label)
    }
}

/// One state value a call read: namespace, key and what it held (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateRead {
    pub namespace: String,
    pub key: String,
    pub value: Option<String>,
}

/// An event a call emitted: delivered only if the call succeeds.
#[derive(Debug, Clone, PartialEq)]
pub struct EmittedEvent {
    pub kind: String,
    pub payload: Payload,
    /// How a person should see it (contract 0.2); `None`: front ends show nothing.
    pub display: Option<String>,
}

/// A granted folder, resolved: where it is on the host, where the plugin sees it.
#[derive(Debug, Clone)]
pub struct DirMount {
    pub host: std::path::PathBuf,
    pub guest: String,
    pub write: bool,
}

/// The data of one call's store: what the host imports see while a plugin runs.
pub struct CallState {
    pub(crate) plugin: Arc<CallingPlugin>,
    pub(crate) bag: StateBag,
    /// Writes to the plugin's own namespace; applied only if the call succeeds.
    pub(crate) writes: BTreeMap<String, Option<String>>,
    pub(crate) events: Vec<EmittedEvent>,
    /// Files the call reports it changed (contract 0.2.5), for front ends to show.
    pub(crate) edits: super::host_api::ReportedEdits,
    pub(crate) read_grants: Arc<[String]>,
    /// What `process.run` may do; `None` when the plugin has no `process` grant.
    pub(crate) process: Option<Arc<ProcessGrant>>,
    /// What `model.complete` may do; `None` when the plugin has no `model` grant.
    pub(crate) model: Option<super::host_api::ModelGrant>,
    /// What the `agents` import may do; `None` when the plugin has no `agents` grant.
    pub(crate) agents: Option<super::host_api::AgentsGrant>,
    /// What the `meter` import answers (contract 0.2.6).
    pub(crate) meter: super::host_api::MeterReading,
    /// What the `history` import answers (contract 0.2.7): set for the `pre-compact` hooks.
    pub(crate) results: Option<super::host_api::ResultPositions>,
    pub(crate) memory: MemoryCap,
    /// The host-side caps, and what the call has used of them.
    pub(crate) caps: CallCaps,
    pub(crate) stderr: MemoryOutputPipe,
    /// What the call read from the bag, recorded only for `provide` (the one export whose
    /// result can be reused).
    pub(crate) reads: Option<Vec<StateRead>>,
    /// Whether the call declared its contribution reusable (`reuse.until-state-changes`).
    pub(crate) reusable: bool,
    /// The hook filters and tools declared so far, recorded only for `configure` (the one
    /// export whose declarations last: as long as the configuration they depend on).
    pub(crate) declarations: Option<Declarations>,
    /// The plugin's granted folders, preopened when its WASI context is built.
    mounts: Arc<[DirMount]>,
    /// Built on the call's first WASI import. Most calls never make one (the stock plugins'
    /// `provide` and tools do not), and building it — random generators, clocks, stdio, an
    /// opened handle per granted folder — is a large part of a fresh store's cost.
    wasi: Option<WasiCtx>,
    /// A granted folder that could not be opened when the context was built: fails the call.
    pub(crate) mount_error: Option<String>,
    /// The call's deadline: no process or model request it starts outlives it.
    pub(crate) deadline: Deadline,
    table: ResourceTable,
}

impl CallState {
    pub fn new(
        plugin: Arc<CallingPlugin>,
        bag: StateBag,
        read_grants: Arc<[String]>,
        process: Option<Arc<ProcessGrant>>,
        limits: &crate::config::Limits,
        mounts: Arc<[DirMount]>,
        deadline: Deadline,
    ) -> Self {
        let memory = MemoryCap::new(limits.memory_bytes());
        let caps = CallCaps::new(*limits);
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        Self {
            plugin,
            bag,
            writes: BTreeMap::new(),
            events: Vec::new(),
            edits: Default::default(),
            read_grants,
            process,
            model: None,
            agents: None,
            meter: Default::default(),
            results: None,
            memory,
            caps,
            stderr,
            reads: None,
            reusable: false,
            declarations: None,
            mounts,
            wasi: None,
            mount_error: None,
            deadline,
            table: ResourceTable::new(),
        }
    }

    /// Reads `key` of `namespace` from the bag, noting it when reads are recorded.
    pub(crate) fn read_bag(&mut self, namespace: &str, key: &str) -> Option<String> {
        let value = self.bag.get(namespace, key);
        if let Some(reads) = &mut self.reads {
            reads.push(StateRead {
                namespace: namespace.to_owned(),
                key: key.to_owned(),
                value: value.clone(),
            });
        }
        value
    }

    /// The reads a reusable call depends on: `Some` only when it declared itself reusable
    /// and had no effects (no writes, no events).
    pub(crate) fn take_reuse(&mut self) -> Option<Vec<StateRead>> {
        let effects = !self.writes.is_empty() || !self.events.is_empty();
        if self.reusable && !effects { self.reads.take() } else { None }
    }

    /// The store one call runs in, armed with this state's limits: its memory cap, and the
    /// epoch deadline its [`Deadline`] gives (the host-side waits derive from the same one).
    pub fn into_store(self, engine: &wasmtime::Engine) -> wasmtime::Store<CallState> {
        let ticks = self.deadline.ticks();
        let mut store = wasmtime::Store::new(engine, self);
        store.limiter(|state| &mut state.memory);
        store.set_epoch_deadline(ticks);
        store.epoch_deadline_trap();
        store
    }

    /// Arms `store` again for a second call in the instance the first one left: a fresh
    /// `deadline` (epoch ticks and host waits alike) and fresh per-call caps, nothing
    /// recorded, no writes or events pending (the first call's were taken when it settled).
    pub fn arm_again(store: &mut wasmtime::Store<CallState>, deadline: Deadline) {
        let ticks = deadline.ticks();
        let state = store.data_mut();
        state.caps = CallCaps::new(*state.caps.limits());
        state.deadline = deadline;
        state.reads = None;
        state.reusable = false;
        state.declarations = None;
        state.writes.clear();
        state.events.clear();
        store.set_epoch_deadline(ticks);
    }

    /// The guest's stderr so far, trimmed: a panic message, usually.
    pub(crate) fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents()).trim().to_owned()
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let wasi =
            self.wasi.get_or_insert_with(|| wasi_context(&self.mounts, &self.stderr, &mut self.mount_error));
        WasiCtxView { ctx: wasi, table: &mut self.table }
    }
}

/// The WASI context of one call: stderr captured, the granted folders preopened. A folder
/// that cannot be opened is left out and noted in `error`.
///
/// Each folder is opened by its canonical path (resolved when the config was loaded)
/// without following a symbolic link, and preopened through the handle that walk opened:
/// what another plugin may write could hold a folder of that path, and a link put in its
/// place must not carry this call elsewhere.
fn wasi_context(mounts: &[DirMount], stderr: &MemoryOutputPipe, error: &mut Option<String>) -> WasiCtx {
    let mut wasi = WasiCtxBuilder::new();
    wasi.stderr(stderr.clone());
    for mount in mounts {
        let perms = if mount.write { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
        let opened =
            crate::sandbox::open_folder(&mount.host).map_err(|cause| cause.to_string()).and_then(|handle| {
                let preopened = wasi.preopened_dir(crate::sandbox::fd_path(&handle), &mount.guest, perms);
                preopened.map(drop).map_err(|cause| format!("{}: {cause}", mount.host.display()))
            });
        if let Err(cause) = opened {
            error.get_or_insert_with(|| format!("cannot open granted folder {}: {cause}", mount.guest));
        }
    }
    wasi.build()
}
