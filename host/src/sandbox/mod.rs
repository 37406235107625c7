//! Running a program confined: the OS sandbox of every process a plugin starts.
//!
//! A [`Sandbox`] runs a [`SandboxSpec`] in namespaces of its own — user, mount, PID, IPC,
//! UTS and (unless the spec allows the network) network — on a filesystem made of the
//! host's system folders read-only (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`, with the
//! entries of `/etc` only their owner may read covered), the spec's folders at their host
//! paths (writable only where asked; each opened without following a symbolic link, parents
//! bound before the folders inside them), a private tmpfs `/tmp`, a minimal `/dev` and a fresh
//! `/proc` that shows only the sandbox's processes. The old root is detached; the
//! environment is only what the spec sets; rlimits cap CPU time, address space, processes
//! and file size, and a cgroup per command (where the host can have one) memory and
//! processes of the command as a whole; `PR_SET_NO_NEW_PRIVS` is set and a seccomp filter
//! refuses what no command needs (`seccomp.rs`). The program has a session of its own (no
//! controlling terminal), a fresh session keyring, and no descriptor but 0, 1 and 2. The program runs as uid/gid 1000 of its
//! own user namespace, so exec leaves it no capabilities.
//!
//! The program is PID 1 of its PID namespace: when it exits, or is killed at the deadline,
//! the kernel kills every process it started (background, `setsid`, double-forked).
//!
//! Whether the kernel allows all this is probed once per process ([`Sandbox::confined`]);
//! there is no silent fallback: [`Sandbox::unconfined`] is an explicit choice.

mod cgroup;
mod child;
mod lines;
mod masks;
mod mountinfo;
mod nofollow;
mod plan;
mod probe;
mod rlimits;
mod run;
mod seccomp;
mod spec;

use std::path::Path;

pub use child::{die_with_parent, kill_group};
pub use lines::Stream;
pub use nofollow::{FolderError, fd_path, open_folder};
pub use rlimits::Rlimits;
pub use run::{RunLimits, RunOutput};
pub use spec::SandboxSpec;

/// How processes are run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// In the namespaces described above.
    Namespaces,
    /// As the host, with only the environment cleared, in a process group of its own that
    /// is killed at the end: what `[runtime] sandbox = "none"` asks for.
    None,
}

/// Runs programs, confined or (explicitly) not.
#[derive(Debug, Clone, Copy)]
pub struct Sandbox {
    confinement: Confinement,
}

impl Sandbox {
    /// The namespace sandbox, after checking (once per process) that this kernel lets us
    /// build it; the error says what it lacks.
    pub fn confined() -> Result<Self, SandboxUnavailable> {
        probe::check()?;
        // Found (or warned about) once, at start rather than at the first command.
        cgroup::hierarchy();
        Ok(Self { confinement: Confinement::Namespaces })
    }

    /// No confinement: the program runs as the host does.
    pub fn unconfined() -> Self {
        Self { confinement: Confinement::None }
    }

    /// What `[runtime] sandbox` asks for: the namespaces (probed; an error when this kernel
    /// cannot build them, never a silent fallback), or the explicit opt-out.
    pub fn for_mode(mode: crate::config::SandboxMode) -> Result<Self, SandboxUnavailable> {
        match mode {
            crate::config::SandboxMode::Namespaces => Self::confined(),
            crate::config::SandboxMode::None => Ok(Self::unconfined()),
        }
    }

    pub fn confinement(&self) -> Confinement {
        self.confinement
    }
}

/// Why the sandbox cannot be built on this machine.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct SandboxUnavailable(pub String);

/// Why one run failed to start.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("setting up the sandbox failed at `{step}`: {source}")]
    Setup { step: String, source: std::io::Error },
    #[error("cannot start `{program}`: {source}")]
    Start { program: String, source: std::io::Error },
    /// A granted folder that cannot be opened without following a link.
    #[error("{0}")]
    Folder(#[from] FolderError),
    #[error("{path}: {source}")]
    Path { path: String, source: std::io::Error },
    #[error("waiting for the process: {0}")]
    Wait(std::io::Error),
}

impl SandboxError {
    fn path(path: &Path, source: std::io::Error) -> Self {
        Self::Path { path: path.display().to_string(), source }
    }
}

#[cfg(test)]
mod tests;
