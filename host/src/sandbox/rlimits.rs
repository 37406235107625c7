//! The resource limits a sandboxed process starts under, soft and hard alike, so it cannot
//! raise them.

/// Per-process limits, applied just before exec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rlimits {
    /// CPU seconds (`RLIMIT_CPU`); the process gets SIGKILL past them.
    pub cpu_secs: u64,
    /// Address space in MiB (`RLIMIT_AS`).
    pub memory_mb: u64,
    /// Processes at once (`RLIMIT_NPROC`, and the PID namespace's `kernel.pid_max` where
    /// the kernel keeps one per namespace). The kernel does not apply the rlimit to host
    /// uid 0, so under a host running as root the bound is pid_max's, which cannot go
    /// below 300 processes.
    pub max_procs: u64,
    /// Size of any file written, in MiB (`RLIMIT_FSIZE`); a larger write fails with EFBIG.
    pub file_mb: u64,
}

impl Default for Rlimits {
    fn default() -> Self {
        Self { cpu_secs: 60, memory_mb: 4096, max_procs: 256, file_mb: 1024 }
    }
}

impl Rlimits {
    /// `(resource, value)` pairs for `setrlimit`, computed before the fork.
    pub(super) fn pairs(&self) -> [(RlimitResource, u64); 4] {
        const MIB: u64 = 1 << 20;
        [
            (RlimitResource::Cpu, self.cpu_secs),
            (RlimitResource::AddressSpace, self.memory_mb.saturating_mul(MIB)),
            (RlimitResource::Processes, self.max_procs),
            (RlimitResource::FileSize, self.file_mb.saturating_mul(MIB)),
        ]
    }
}

/// The limits we set, named without libc's types outside the glue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RlimitResource {
    Cpu,
    AddressSpace,
    Processes,
    FileSize,
}
