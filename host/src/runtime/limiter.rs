use wasmtime::ResourceLimiter;

/// The memory cap of one call. Unlike `StoreLimits`, it remembers that it refused a grow,
/// so the error can say "memory limit" instead of the guest allocator's `unreachable`.
pub struct MemoryCap {
    max_bytes: usize,
    hit: bool,
}

/// Table entries a call may grow to; generous, only there to stop a runaway table.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

impl MemoryCap {
    pub fn new(max_bytes: usize) -> Self {
        Self { max_bytes, hit: false }
    }

    pub fn hit(&self) -> bool {
        self.hit
    }

    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.hit = true;
            wasmtime::bail!("memory limit of {} MiB reached", self.max_bytes >> 20);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}
