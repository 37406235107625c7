use std::collections::BTreeMap;
use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::caps::CallCaps;
use super::hook_filter::HookFilters;
use super::limiter::MemoryCap;
use super::plugin::PluginIdentity;
use super::reuse::StateRead;
use crate::events::Payload;
use crate::state::StateBag;

/// Bytes of a guest's stderr kept per call: enough for a panic message.
const STDERR_CAPACITY: usize = 8 * 1024;

/// A plugin's grant to run processes: where they run, what they see, how they are confined.
#[derive(Debug)]
pub struct ProcessGrant {
    /// The first writable granted folder, on the host; `None` refuses every run.
    pub(super) workdir: Option<std::path::PathBuf>,
    /// Names of the host environment variables passed on.
    pub(super) env: Vec<String>,
    /// The granted folders (host path, writable), shown to the process at their host paths.
    pub(super) folders: Vec<(std::path::PathBuf, bool)>,
    pub(super) network: bool,
    pub(super) rlimits: crate::sandbox::Rlimits,
    pub(super) sandbox: crate::sandbox::Sandbox,
    /// The plugin's `limits.timeout_ms`: no process outlives the call that started it.
    pub(super) deadline_ms: u64,
    /// The plugin's `limits.max_output_kb` in bytes: a call cannot return more text than
    /// that, so the host keeps no more of a process's output, whatever the plugin asks.
    pub(super) max_output_bytes: u64,
}

/// A granted folder, resolved: where it is on the host, where the plugin sees it.
#[derive(Debug, Clone)]
pub(super) struct DirMount {
    pub host: std::path::PathBuf,
    pub guest: String,
    pub write: bool,
}

/// The data of one call's store: what the host imports see while a plugin runs.
pub struct CallState {
    pub(super) plugin: Arc<PluginIdentity>,
    pub(super) bag: StateBag,
    /// Writes to the plugin's own namespace; applied only if the call succeeds.
    pub(super) writes: BTreeMap<String, Option<String>>,
    pub(super) events: Vec<(String, Payload)>,
    pub(super) read_grants: Arc<[String]>,
    /// What `process.run` may do; `None` when the plugin has no `process` grant.
    pub(super) process: Option<Arc<ProcessGrant>>,
    pub(super) memory: MemoryCap,
    /// The host-side caps, and what the call has used of them.
    pub(super) caps: CallCaps,
    pub(super) stderr: MemoryOutputPipe,
    /// What the call read from the bag, recorded only for `provide` (the one export whose
    /// result can be reused).
    pub(super) reads: Option<Vec<StateRead>>,
    /// Whether the call declared its contribution reusable (`reuse.until-state-changes`).
    pub(super) reusable: bool,
    /// The tool hooks' filters declared so far, recorded only for `configure` (the one
    /// export whose declarations last: as long as the configuration they depend on).
    pub(super) hook_filters: Option<HookFilters>,
    /// The plugin's granted folders, preopened when its WASI context is built.
    mounts: Arc<[DirMount]>,
    /// Built on the call's first WASI import. Most calls never make one (the stock plugins'
    /// `provide` and tools do not), and building it — random generators, clocks, stdio, an
    /// opened handle per granted folder — was a fifth of every fresh store's cost.
    wasi: Option<WasiCtx>,
    /// A granted folder that could not be opened when the context was built: fails the call.
    pub(super) mount_error: Option<String>,
    /// When the call began: a process it starts must end before the call's deadline.
    pub(super) started: std::time::Instant,
    table: ResourceTable,
}

impl CallState {
    pub(super) fn new(
        plugin: Arc<PluginIdentity>,
        bag: StateBag,
        read_grants: Arc<[String]>,
        process: Option<Arc<ProcessGrant>>,
        memory: MemoryCap,
        caps: CallCaps,
        mounts: Arc<[DirMount]>,
    ) -> Self {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        Self {
            plugin,
            bag,
            writes: BTreeMap::new(),
            events: Vec::new(),
            read_grants,
            process,
            memory,
            caps,
            stderr,
            reads: None,
            reusable: false,
            hook_filters: None,
            mounts,
            wasi: None,
            mount_error: None,
            started: std::time::Instant::now(),
            table: ResourceTable::new(),
        }
    }

    /// Reads `key` of `namespace` from the bag, noting it when reads are recorded.
    pub(super) fn read_bag(&mut self, namespace: &str, key: &str) -> Option<String> {
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
    pub(super) fn take_reuse(&mut self) -> Option<Vec<StateRead>> {
        let effects = !self.writes.is_empty() || !self.events.is_empty();
        if self.reusable && !effects { self.reads.take() } else { None }
    }

    /// The guest's stderr so far, trimmed: a panic message, usually.
    pub(super) fn stderr_text(&self) -> String {
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
fn wasi_context(mounts: &[DirMount], stderr: &MemoryOutputPipe, error: &mut Option<String>) -> WasiCtx {
    let mut wasi = WasiCtxBuilder::new();
    wasi.stderr(stderr.clone());
    for mount in mounts {
        let perms = if mount.write { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
        if let Err(cause) = wasi.preopened_dir(&mount.host, &mount.guest, perms) {
            error.get_or_insert_with(|| {
                format!("cannot open granted folder {}: {cause}", mount.host.display())
            });
        }
    }
    wasi.build()
}

/// A state write a successful call made, for the caller to see (tests, events).
pub type StateWrite = (String, Option<String>);

/// What a successful call returns: its value and the events it emitted, in order. Its state
/// writes have already been applied to the session's bag.
#[derive(Debug)]
pub struct CallOutput<R> {
    pub value: R,
    pub events: Vec<(String, Payload)>,
}
