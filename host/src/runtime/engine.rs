use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context as _;
use wasmtime::component::Linker;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::call::CallState;

/// How often the epoch advances; deadlines are rounded up to whole ticks.
pub const TICK: Duration = Duration::from_millis(5);

/// Instances the pool holds at once: one per call in flight, so this bounds concurrency
/// across every session, not the number of sessions.
const POOLED_INSTANCES: u32 = 1_000;

/// The one wasmtime engine, its epoch ticker and the linker every plugin is linked with.
pub struct SandboxEngine {
    engine: Engine,
    linker: Linker<CallState>,
    /// Kept so the epoch ticks for as long as the engine lives; it stops when dropped.
    _ticker: Ticker,
}

impl SandboxEngine {
    /// Builds the engine: pooling allocator when the machine lets us reserve the address
    /// space for it, on-demand allocation otherwise (slower calls, same guarantees). The
    /// linker gets WASI here and the contract's own imports from `imports`: the sandbox
    /// knows how to implement them, not which contract versions name them.
    pub fn new(imports: impl FnOnce(&mut Linker<CallState>) -> wasmtime::Result<()>) -> anyhow::Result<Self> {
        let engine = match Engine::new(&base_config(Some(pooling_config()))) {
            Ok(engine) => engine,
            Err(error) => {
                tracing::warn!(%error, "pooling allocator unavailable; allocating on demand");
                let engine = Engine::new(&base_config(None)).map_err(anyhow::Error::from);
                engine.context("cannot create the wasm engine")?
            }
        };
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(anyhow::Error::from)
            .context("cannot link WASI into the plugin linker")?;
        imports(&mut linker).map_err(anyhow::Error::from).context("cannot link the agent-host imports")?;
        let ticker = Ticker::start(engine.clone());
        Ok(Self { engine, linker, _ticker: ticker })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn linker(&self) -> &Linker<CallState> {
        &self.linker
    }
}

fn base_config(pooling: Option<PoolingAllocationConfig>) -> Config {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    config.cranelift_opt_level(wasmtime::OptLevel::Speed);
    // For `perf`: guest functions by name, from the map wasmtime writes to /tmp/perf-PID.map.
    // Off unless asked for, since the map grows with every module compiled or loaded.
    if std::env::var_os("AGENT_HOST_PROFILE_GUEST").is_some_and(|value| value == "perfmap") {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    if let Some(pooling) = pooling {
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling));
    }
    config
}

fn pooling_config() -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::default();
    // Rust components built for wasip2 carry a handful of core instances (the program plus
    // the adapter's shims), one memory and a few tables.
    pool.total_component_instances(POOLED_INSTANCES);
    pool.total_core_instances(POOLED_INSTANCES * 8);
    pool.total_memories(POOLED_INSTANCES);
    pool.total_tables(POOLED_INSTANCES * 4);
    pool.max_core_instances_per_component(16);
    pool.max_memories_per_component(2);
    pool.max_tables_per_component(8);
    pool.max_memory_size(crate::config::mib(crate::config::MAX_MEMORY_MB));
    // Every call gets a fresh instance, so a slot is reset after every call. Resetting with
    // `madvise` costs a TLB shootdown now and a page fault per page on the next call (a
    // large share of a call's time); instead, keep what a call typically touches
    // resident and restore it in place. PAGEMAP_SCAN (Linux 6.7+) finds the pages that were
    // really touched, so only those are restored.
    pool.linear_memory_keep_resident(KEEP_RESIDENT);
    pool.table_keep_resident(64 << 10);
    pool.async_stack_keep_resident(KEEP_RESIDENT);
    pool.pagemap_scan(wasmtime::Enabled::Auto);
    pool
}

/// Bytes of each linear memory and fiber stack restored in place rather than given back.
const KEEP_RESIDENT: usize = 2 << 20;

/// Advances the engine's epoch every [`TICK`] on its own thread, until stopped or dropped.
struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    fn start(engine: Engine) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    engine.increment_epoch();
                }
            })
            .expect("the epoch ticker thread must start");
        Self { stop, thread: Some(thread) }
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop();
    }
}
