//! One cgroup per command, so `process_memory_mb` and `process_max_procs` bound the
//! command as a whole (every process it starts, and the pages of its `/tmp`), not each
//! process alone as the rlimits do.
//!
//! Where the host can have one: cgroup v2 with the `memory` and `pids` controllers
//! enabled for the children of the host's own cgroup (a delegated subtree, or root on the
//! root cgroup), else cgroup v1's `memory` and `pids` hierarchies (a hybrid layout) where
//! the host may create cgroups below its own. Each command's leaf is made below the host's
//! cgroup, so whatever bounds the host bounds it too. Where none can be had, the host says
//! so once, naming why, and the bound is per process (see README).
//!
//! The command's PID 1 joins the leaf by writing `0` (itself) to each `cgroup.procs`
//! before it builds its filesystem; every process the command starts inherits it.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where commands' leaves are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Hierarchy {
    /// A v2 cgroup whose children get `memory` and `pids`.
    V2 { parent: PathBuf },
    /// v1 `memory` and `pids` cgroups of the host, each a parent.
    V1 { memory: PathBuf, pids: PathBuf },
}

/// The hierarchy this host uses, found once per process; when there is none, the warning
/// is given then.
pub(super) fn hierarchy() -> Option<&'static Hierarchy> {
    static FOUND: OnceLock<Option<Hierarchy>> = OnceLock::new();
    FOUND
        .get_or_init(|| match find(Path::new("/"), &read("/proc/self/cgroup")) {
            Ok(hierarchy) => Some(hierarchy),
            Err(why) => {
                warn_unbounded(&why);
                None
            }
        })
        .as_ref()
}

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Said once at start when commands get no cgroup: in the log, and on stderr directly when
/// the log would not show a warning.
fn warn_unbounded(why: &str) {
    let warning = format!(
        "no cgroup for sandboxed commands ({why}): process_memory_mb and process_max_procs \
         bound each process of a command, not the command as a whole"
    );
    tracing::warn!("{warning}");
    if !tracing::enabled!(tracing::Level::WARN) {
        eprintln!("warning: {warning}");
    }
}

/// The hierarchy under `root` (`/` but in tests) for a process whose `/proc/self/cgroup`
/// reads `membership`, checked by making and removing a leaf; or why there is none.
pub(super) fn find(root: &Path, membership: &str) -> Result<Hierarchy, String> {
    let mount = root.join("sys/fs/cgroup");
    let own = |controller: &str| {
        membership.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            controllers.split(',').any(|c| c == controller).then(|| path.trim_start_matches('/').to_owned())
        })
    };
    let mut tried = Vec::new();
    if let Some(path) = own("") {
        for v2 in [mount.clone(), mount.join("unified")] {
            if !v2.join("cgroup.controllers").exists() {
                continue;
            }
            let parent = v2.join(&path);
            match v2_parent(&parent) {
                Ok(()) => return check(Hierarchy::V2 { parent }),
                Err(why) => tried.push(format!("cgroup v2 at {}: {why}", parent.display())),
            }
        }
    }
    if let (Some(memory), Some(pids)) = (own("memory"), own("pids")) {
        let memory = mount.join("memory").join(memory);
        let pids = mount.join("pids").join(pids);
        if memory.join("memory.limit_in_bytes").exists() && pids.join("cgroup.procs").exists() {
            match check(Hierarchy::V1 { memory, pids }) {
                Ok(found) => return Ok(found),
                Err(why) => tried.push(why),
            }
        }
    }
    if tried.is_empty() {
        tried.push("no cgroup v2 with controllers and no v1 memory and pids hierarchies are mounted".into());
    }
    Err(tried.join("; "))
}

/// Whether the v2 cgroup `parent` gives its children `memory` and `pids`, enabling them
/// when it can (a cgroup holding processes cannot, unless it is the root).
fn v2_parent(parent: &Path) -> Result<(), String> {
    let available = read(parent.join("cgroup.controllers"));
    for controller in ["memory", "pids"] {
        if !available.split_whitespace().any(|c| c == controller) {
            return Err(format!("the {controller} controller is not available to it"));
        }
    }
    let enabled = read(parent.join("cgroup.subtree_control"));
    if ["memory", "pids"].iter().all(|c| enabled.split_whitespace().any(|e| e == *c)) {
        return Ok(());
    }
    std::fs::write(parent.join("cgroup.subtree_control"), "+memory +pids")
        .map_err(|e| format!("cannot enable memory and pids for its children: {e}"))
}

/// The hierarchy, once a leaf could be made, limited and removed in it; leaves a host
/// that is gone left behind (its last processes were still exiting) are removed.
fn check(hierarchy: Hierarchy) -> Result<Hierarchy, String> {
    Leaf::create(&hierarchy, 1, 1)?;
    let parents = match &hierarchy {
        Hierarchy::V2 { parent } => vec![parent],
        Hierarchy::V1 { memory, pids } => vec![memory, pids],
    };
    for parent in parents {
        for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("agent-host-")?.split('-').next())
            else {
                continue;
            };
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
    Ok(hierarchy)
}

/// One command's cgroup(s), removed on drop once empty.
#[derive(Debug)]
pub(super) struct Leaf {
    dirs: Vec<PathBuf>,
    /// Each `cgroup.procs` the child writes `0` to, as C strings made before the fork.
    pub procs: Vec<CString>,
}

impl Leaf {
    /// A leaf holding the command to `memory_mb` MiB (swap included where the kernel
    /// counts it apart) and `max_procs` processes.
    pub(super) fn create(hierarchy: &Hierarchy, memory_mb: u64, max_procs: u64) -> Result<Self, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("agent-host-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let bytes = memory_mb.saturating_mul(1 << 20).to_string();
        let procs = max_procs.to_string();
        let mut leaf = Self { dirs: Vec::new(), procs: Vec::new() };
        match hierarchy {
            Hierarchy::V2 { parent } => {
                let dir = leaf.make(parent, &name)?;
                write(&dir, "memory.max", &bytes)?;
                write_if_present(&dir, "memory.swap.max", "0")?;
                write(&dir, "pids.max", &procs)?;
            }
            Hierarchy::V1 { memory, pids } => {
                let dir = leaf.make(memory, &name)?;
                write(&dir, "memory.limit_in_bytes", &bytes)?;
                // Only after the limit above: the kernel keeps memsw >= limit.
                write_if_present(&dir, "memory.memsw.limit_in_bytes", &bytes)?;
                let dir = leaf.make(pids, &name)?;
                write(&dir, "pids.max", &procs)?;
            }
        }
        Ok(leaf)
    }

    fn make(&mut self, parent: &Path, name: &str) -> Result<PathBuf, String> {
        let dir = parent.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        self.dirs.push(dir.clone());
        let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
            .map_err(|_| format!("{} holds a NUL byte", dir.display()))?;
        self.procs.push(procs);
        Ok(dir)
    }
}

fn write(dir: &Path, file: &str, value: &str) -> Result<(), String> {
    let path = dir.join(file);
    std::fs::write(&path, value).map_err(|e| format!("cannot write {value} to {}: {e}", path.display()))
}

fn write_if_present(dir: &Path, file: &str, value: &str) -> Result<(), String> {
    if dir.join(file).exists() { write(dir, file, value) } else { Ok(()) }
}

impl Drop for Leaf {
    /// Removes the leaf. Its last processes may still be on their way out (the kernel
    /// reaps a killed namespace in the background), so a busy leaf is retried a while from
    /// a thread of its own.
    fn drop(&mut self) {
        let dirs = std::mem::take(&mut self.dirs);
        let remove = move || {
            dirs.iter().rev().all(|dir| match std::fs::remove_dir(dir) {
                Ok(()) => true,
                Err(e) => e.kind() == std::io::ErrorKind::NotFound,
            })
        };
        if remove() {
            return;
        }
        std::thread::spawn(move || {
            for _ in 0..300 {
                std::thread::sleep(std::time::Duration::from_millis(20));
                if remove() {
                    return;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_usable_hierarchy_the_reason_is_named() {
        let root = tempfile::tempdir().unwrap();
        let v2 = root.path().join("sys/fs/cgroup/unified");
        std::fs::create_dir_all(&v2).unwrap();
        // A v2 hierarchy with no controllers, as when v1 holds them all.
        std::fs::write(v2.join("cgroup.controllers"), "").unwrap();
        let why = find(root.path(), "4:memory:/x\n0::/\n").unwrap_err();
        assert!(why.contains("the memory controller is not available to it"), "{why}");
        assert!(why.contains("sys/fs/cgroup/unified"), "{why}");
        let why = find(root.path(), "").unwrap_err();
        assert!(why.contains("no cgroup v2 with controllers and no v1 memory and pids"), "{why}");
    }
}
