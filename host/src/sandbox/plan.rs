//! The namespaces and the filesystem of one run, worked out before the fork: every path as
//! a C string, every mount as one [`MountOp`], so the child only makes system calls.
//!
//! The child (see `child.rs`) mounts a tmpfs over `/tmp` of its own mount namespace,
//! pivots into it (the host's tree is then `/oldroot`), builds the sandbox's tree under
//! `/newroot` from the host's by bind mounts, pivots again and detaches the old tree.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::masks::Mask;
use super::rlimits::RlimitResource;
use super::spec::{Folder, SandboxSpec};
use super::{SandboxError, mountinfo, nofollow};

/// The uid and gid the program has inside: not 0, so exec leaves it no capabilities (a
/// root inside could remount the read-only binds writable).
pub(super) const INSIDE_ID: u32 = 1000;

/// Host folders shown read-only at their own path, when they exist; a symlink (`/bin` ->
/// `usr/bin` on a merged-/usr system) is recreated as the same symlink.
const SYSTEM_FOLDERS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];
/// Device nodes bound in from the host's `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];
/// What `/proc` lists of the kernel's keys, covered as `/etc`'s private files are.
const PROC_KEY_LISTINGS: &[&str] = &["/proc/keys", "/proc/key-users"];
/// `/dev`'s usual symlinks into `/proc` (bash's process substitution uses `/dev/fd`).
const DEVICE_LINKS: &[(&str, &str)] = &[
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
];

/// One step of building the sandbox's tree, on paths as the child sees them after the
/// first pivot (`/oldroot/...` is the host, `/newroot/...` the sandbox).
#[derive(Debug)]
pub(super) enum MountOp {
    /// A folder that must exist (created if missing).
    Dir(CString),
    /// A file that must exist, as a mount point for a file.
    File(CString),
    Symlink {
        target: CString,
        link: CString,
    },
    /// A recursive bind of `source` at `target`, then remounted `nosuid` (and `nodev` unless
    /// `devices`), read-only when `read_only`, keeping the flags the host mount has.
    Bind {
        source: CString,
        target: CString,
        read_only: bool,
        devices: bool,
    },
    /// A granted folder: the child opens `components` one at a time under `/oldroot`
    /// without following a symbolic link (so a link that replaced one since the config was
    /// loaded fails the run), and binds what it opened at `target` like [`MountOp::Bind`].
    BindFolder {
        components: Vec<CString>,
        target: CString,
        read_only: bool,
    },
    /// A submount of a read-only bind, made read-only too.
    RemountReadOnly(CString),
    Tmpfs {
        target: CString,
        options: CString,
        read_only: bool,
    },
    /// A fresh procfs, read-only: the program is uid 0 to the host's permission checks when
    /// the host runs as root, and those checks are all that guard `/proc/sys`
    /// (`kernel.modprobe`, `kernel.core_pattern`) and `/proc/sysrq-trigger`. Before it is
    /// made read-only, `pid_max` is written to `pid_max_file`, the new PID namespace's own
    /// `kernel.pid_max` (per namespace since Linux 6.14; an older kernel refuses, and the
    /// rlimit alone bounds processes).
    Proc {
        target: CString,
        pid_max_file: CString,
        pid_max: Vec<u8>,
    },
}

/// Everything the child needs, prepared in the parent.
#[derive(Debug)]
pub(super) struct Plan {
    /// `CLONE_NEW*` flags for `unshare`.
    pub namespaces: libc::c_int,
    pub uid_map: Vec<u8>,
    pub gid_map: Vec<u8>,
    pub ops: Vec<MountOp>,
    /// What each op does, for the error that names a failed one.
    pub descriptions: Vec<String>,
    pub workdir: CString,
    pub rlimits: [(RlimitResource, u64); 4],
    /// Seconds after which the supervising process gives up (and so kills the sandbox),
    /// should the host not be there to kill it.
    pub backstop_secs: u32,
    /// The host's mount points, read once per plan.
    host_mounts: Vec<PathBuf>,
}

impl Plan {
    pub(super) fn build(
        spec: &SandboxSpec,
        host_ids: (u32, u32),
        masks: &[Mask],
        backstop_secs: u32,
    ) -> Result<Self, SandboxError> {
        let mut namespaces = libc::CLONE_NEWUSER
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS;
        if !spec.network {
            namespaces |= libc::CLONE_NEWNET;
        }
        let mut plan = Self {
            namespaces,
            uid_map: format!("{INSIDE_ID} {} 1\n", host_ids.0).into_bytes(),
            gid_map: format!("{INSIDE_ID} {} 1\n", host_ids.1).into_bytes(),
            ops: Vec::new(),
            descriptions: Vec::new(),
            // Canonical, like the folders: a symlink on the way would not be there inside.
            workdir: match &spec.workdir {
                Some(dir) => c_path(&std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone()))?,
                None => c"/".to_owned(),
            },
            rlimits: spec.rlimits.pairs(),
            backstop_secs,
            host_mounts: mountinfo::mount_points(),
        };
        plan.system_folders()?;
        plan.devices()?;
        plan.push(MountOp::Dir(inside("/proc")?), "create /proc");
        plan.push(
            MountOp::Proc {
                target: inside("/proc")?,
                pid_max_file: inside("/proc/sys/kernel/pid_max")?,
                pid_max: pid_max(spec.rlimits.max_procs).to_string().into_bytes(),
            },
            "mount a fresh /proc of the new PID namespace, read-only",
        );
        // Keys are the user's, not the namespace's: the host user's keys would be listed
        // by description here, though the seccomp filter keeps their data out of reach.
        for listing in PROC_KEY_LISTINGS {
            plan.push(
                MountOp::Bind {
                    source: outside(Path::new("/dev/null"))?,
                    target: inside(listing)?,
                    read_only: true,
                    devices: false,
                },
                format!("cover {listing}"),
            );
        }
        let tmp_size = spec.rlimits.file_mb.max(1);
        plan.push(MountOp::Dir(inside("/tmp")?), "create /tmp");
        plan.push(
            MountOp::Tmpfs {
                target: inside("/tmp")?,
                options: CString::new(format!("mode=1777,size={tmp_size}m")).expect("no NUL"),
                read_only: false,
            },
            "mount a private tmpfs at /tmp",
        );
        // Parents before children: a folder bound after one inside it would cover it.
        let mut folders: Vec<&Folder> = spec.folders.iter().collect();
        folders.sort_by(|a, b| a.path.cmp(&b.path));
        for folder in folders {
            plan.bind_folder(folder)?;
        }
        for (source, target) in &spec.binds_ro {
            let source = canonical(source)?;
            plan.bind(&source, target, true, source.is_dir())?;
        }
        for mask in masks {
            plan.mask(mask)?;
        }
        Ok(plan)
    }

    fn push(&mut self, op: MountOp, description: impl Into<String>) {
        self.ops.push(op);
        self.descriptions.push(description.into());
    }

    fn system_folders(&mut self) -> Result<(), SandboxError> {
        for folder in SYSTEM_FOLDERS {
            let path = Path::new(folder);
            let Ok(meta) = std::fs::symlink_metadata(path) else { continue };
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(path).map_err(|source| SandboxError::path(path, source))?;
                self.push(
                    MountOp::Symlink { target: c_path(&target)?, link: inside(path)? },
                    format!("link {folder} to {}", target.display()),
                );
            } else if meta.is_dir() {
                self.bind(path, path, true, true)?;
            }
        }
        Ok(())
    }

    fn devices(&mut self) -> Result<(), SandboxError> {
        self.push(MountOp::Dir(inside("/dev")?), "create /dev");
        self.push(
            MountOp::Tmpfs {
                target: inside("/dev")?,
                options: c"mode=0755,size=64k".to_owned(),
                read_only: false,
            },
            "mount a tmpfs at /dev",
        );
        for device in DEVICES {
            let host = Path::new("/dev").join(device);
            if !host.exists() {
                continue;
            }
            self.push(MountOp::File(inside(&host)?), format!("create {}", host.display()));
            self.push(
                MountOp::Bind {
                    source: outside(&host)?,
                    target: inside(&host)?,
                    read_only: false,
                    devices: true,
                },
                format!("bind {}", host.display()),
            );
        }
        for (name, target) in DEVICE_LINKS {
            let link = Path::new("/dev").join(name);
            self.push(
                MountOp::Symlink { target: c_path(Path::new(target))?, link: inside(&link)? },
                format!("link {} to {target}", link.display()),
            );
        }
        self.push(MountOp::RemountReadOnly(inside("/dev")?), "make /dev read-only");
        Ok(())
    }

    /// Binds the host's `source` at `target` inside, creating `target` and its parents.
    fn bind(
        &mut self,
        source: &Path,
        target: &Path,
        read_only: bool,
        is_dir: bool,
    ) -> Result<(), SandboxError> {
        self.mount_point(target, is_dir)?;
        let how = if read_only { "read-only" } else { "writable" };
        self.push(
            MountOp::Bind { source: outside(source)?, target: inside(target)?, read_only, devices: false },
            format!("bind {} {how} at {}", source.display(), target.display()),
        );
        if read_only {
            self.remount_submounts_read_only(source, target)?;
        }
        Ok(())
    }

    /// Creates `target` inside (a folder, or a file when not `is_dir`) and its parents.
    fn mount_point(&mut self, target: &Path, is_dir: bool) -> Result<(), SandboxError> {
        let mut ancestors: Vec<&Path> = target.ancestors().skip(1).filter(|a| *a != Path::new("/")).collect();
        ancestors.reverse();
        for ancestor in ancestors {
            self.push(MountOp::Dir(inside(ancestor)?), format!("create {}", ancestor.display()));
        }
        let create = if is_dir { MountOp::Dir(inside(target)?) } else { MountOp::File(inside(target)?) };
        self.push(create, format!("create {}", target.display()));
        Ok(())
    }

    /// The host's mounts below `source`, bound at `target` with it, made read-only too.
    fn remount_submounts_read_only(&mut self, source: &Path, target: &Path) -> Result<(), SandboxError> {
        let submounts: Vec<PathBuf> = mountinfo::below(&self.host_mounts, source).cloned().collect();
        for submount in submounts {
            let relative = submount.strip_prefix(source).expect("below the source");
            let at = target.join(relative);
            self.push(MountOp::RemountReadOnly(inside(&at)?), format!("make {} read-only", at.display()));
        }
        Ok(())
    }

    /// Binds a granted folder at its own path, opened as [`MountOp::BindFolder`] says. The
    /// same walk here first gives the clear error, naming the link.
    fn bind_folder(&mut self, folder: &Folder) -> Result<(), SandboxError> {
        let path = &folder.path;
        drop(nofollow::open_folder(path)?);
        let components = nofollow::components(path)?;
        let read_only = !folder.write;
        self.mount_point(path, true)?;
        let how = if read_only { "read-only" } else { "writable" };
        self.push(
            MountOp::BindFolder { components, target: inside(path)?, read_only },
            format!("bind {} {how}, opened without following symbolic links", path.display()),
        );
        if read_only {
            self.remount_submounts_read_only(path, path)?;
        }
        Ok(())
    }

    fn mask(&mut self, mask: &Mask) -> Result<(), SandboxError> {
        let target = inside(&mask.path)?;
        let op = if mask.dir {
            MountOp::Tmpfs { target, options: c"mode=000,size=4k".to_owned(), read_only: true }
        } else {
            MountOp::Bind {
                source: outside(Path::new("/dev/null"))?,
                target,
                read_only: true,
                devices: false,
            }
        };
        self.push(op, format!("cover {}, which only its owner may read", mask.path.display()));
        Ok(())
    }
}

/// The `kernel.pid_max` that holds the PID namespace to `max_procs` processes (PIDs run
/// from 1 to `pid_max - 1`). The kernel takes nothing below 301, so under 300 the rlimit
/// is the only bound, and the kernel does not apply that to host uid 0.
fn pid_max(max_procs: u64) -> u64 {
    const PID_MAX_MIN: u64 = 301;
    max_procs.saturating_add(1).max(PID_MAX_MIN)
}

/// `path` (absolute) as the child sees the sandbox's copy of it before the second pivot.
fn inside(path: impl AsRef<Path>) -> Result<CString, SandboxError> {
    prefixed("/newroot", path.as_ref())
}

/// `path` (absolute) as the child sees the host's after the first pivot.
fn outside(path: &Path) -> Result<CString, SandboxError> {
    prefixed("/oldroot", path)
}

fn prefixed(prefix: &str, path: &Path) -> Result<CString, SandboxError> {
    if !path.is_absolute() {
        return Err(SandboxError::path(path, std::io::Error::other("the path must be absolute")));
    }
    let mut bytes = prefix.as_bytes().to_vec();
    bytes.extend_from_slice(path.as_os_str().as_bytes());
    c_bytes(path, bytes)
}

fn c_path(path: &Path) -> Result<CString, SandboxError> {
    c_bytes(path, path.as_os_str().as_bytes().to_vec())
}

fn c_bytes(path: &Path, bytes: Vec<u8>) -> Result<CString, SandboxError> {
    CString::new(bytes)
        .map_err(|_| SandboxError::path(path, std::io::Error::other("the path holds a NUL byte")))
}

fn canonical(path: &Path) -> Result<PathBuf, SandboxError> {
    std::fs::canonicalize(path).map_err(|source| SandboxError::path(path, source))
}
