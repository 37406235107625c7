//! The sandbox's only unsafe code: what runs between `fork` and `exec`.
//!
//! std forks and calls [`enter`] in the child (the *supervisor*). It unshares the
//! namespaces, maps its uid and gid and forks again: the grandchild is PID 1 of the new PID
//! namespace, joins the command's cgroup, leaves the host's session and keyring, builds the
//! filesystem, sets the limits, installs the seccomp filters and returns, and std execs the
//! program in it. The supervisor closes every descriptor, waits for PID 1 and exits with its status.
//! When PID 1 exits the kernel kills everything else in its namespace; when the supervisor
//! dies (the host kills it at the deadline) PID 1 gets SIGKILL (`PR_SET_PDEATHSIG`).
//!
//! Between fork and exec only async-signal-safe calls are allowed: everything here is a
//! system call on data of the [`Plan`] built before the fork; nothing allocates.

#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;

use super::plan::{MountOp, Plan};
use super::rlimits::RlimitResource;
use super::seccomp::Filters;

/// The steps before and after the mount ops, as reported to the parent (a mount op is
/// reported as `MOUNT_OPS + its index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(super) enum Stage {
    Unshare = 1,
    Setgroups,
    UidMap,
    GidMap,
    LivenessPipe,
    Fork,
    DeathSignal,
    PrivateMounts,
    BaseTmpfs,
    BaseFolders,
    FirstPivot,
    NewRoot,
    SecondPivot,
    DetachOldRoot,
    ReadOnlyRoot,
    Workdir,
    Rlimits,
    NoNewPrivs,
    NewSession,
    SessionKeyring,
    CloseInherited,
    Seccomp,
    Cgroup,
}

pub(super) const MOUNT_OPS: u32 = 1000;

impl Stage {
    pub(super) fn from_code(code: u32) -> Option<Self> {
        use Stage::*;
        [
            Unshare,
            Setgroups,
            UidMap,
            GidMap,
            LivenessPipe,
            Fork,
            DeathSignal,
            PrivateMounts,
            BaseTmpfs,
            BaseFolders,
            FirstPivot,
            NewRoot,
            SecondPivot,
            DetachOldRoot,
            ReadOnlyRoot,
            Workdir,
            Rlimits,
            NoNewPrivs,
            NewSession,
            SessionKeyring,
            CloseInherited,
            Seccomp,
            Cgroup,
        ]
        .into_iter()
        .find(|stage| *stage as u32 == code)
    }
}

/// The host's effective uid and gid, to map inside.
pub(super) fn host_ids() -> (u32, u32) {
    // SAFETY: geteuid and getegid cannot fail and touch no memory of ours.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

/// SIGKILL to every process of the process group `group`.
pub fn kill_group(group: u32) {
    let Ok(group) = libc::pid_t::try_from(group) else { return };
    // SAFETY: kill only sends a signal; a group that is gone is ESRCH, ignored.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}

/// Makes `command`'s process get SIGKILL when the thread that started it (and so the host)
/// dies, so a host killed outright leaves no orphan behind.
pub fn die_with_parent(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child and makes one async-signal-safe system
    // call; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Makes `command` enter the sandbox `plan` describes, under `filters`, in the cgroup
/// whose `cgroup.procs` files are `cgroup_procs`, before it execs; a failed step is written
/// to `step_fd` as its code and errno (eight bytes) before the errno goes to std.
pub(super) fn install(
    command: &mut std::process::Command,
    plan: Arc<Plan>,
    filters: &'static Filters,
    cgroup_procs: Vec<CString>,
    step_fd: RawFd,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child. `enter` only makes system calls (all
    // async-signal-safe) on `plan`, `filters` and `cgroup_procs`, which were built before
    // the fork and are only read; it allocates nothing and takes no lock. The supervisor branch never
    // returns (`_exit`).
    unsafe {
        command.pre_exec(move || enter(&plan, filters, &cgroup_procs, step_fd));
    }
}

fn enter(plan: &Plan, filters: &Filters, cgroup_procs: &[CString], step_fd: RawFd) -> io::Result<()> {
    let fail = |stage: u32| {
        let error = io::Error::last_os_error();
        report(step_fd, stage, error.raw_os_error().unwrap_or(0));
        error
    };
    // SAFETY (this whole function): plain system calls on C strings and buffers of `plan`
    // that outlive them; each return value is checked.
    unsafe {
        if libc::unshare(plan.namespaces) != 0 {
            return Err(fail(Stage::Unshare as u32));
        }
        write_file(c"/proc/self/setgroups", b"deny").map_err(|_| fail(Stage::Setgroups as u32))?;
        write_file(c"/proc/self/uid_map", &plan.uid_map).map_err(|_| fail(Stage::UidMap as u32))?;
        write_file(c"/proc/self/gid_map", &plan.gid_map).map_err(|_| fail(Stage::GidMap as u32))?;
        // PID 1 learns from this pipe whether the supervisor is still there once its
        // death signal is armed: no writer left means it died before.
        let mut liveness = [0 as RawFd; 2];
        if libc::pipe2(liveness.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(fail(Stage::LivenessPipe as u32));
        }
        match libc::fork() {
            -1 => return Err(fail(Stage::Fork as u32)),
            0 => {}
            pid1 => supervise(pid1, liveness[1], plan.backstop_secs),
        }
        libc::close(liveness[1]);
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
            return Err(fail(Stage::DeathSignal as u32));
        }
        let mut poll = libc::pollfd { fd: liveness[0], events: libc::POLLIN, revents: 0 };
        if libc::poll(&mut poll, 1, 0) == 1 && poll.revents & libc::POLLHUP != 0 {
            libc::_exit(1);
        }
        libc::close(liveness[0]);
        // PID 1 joins the command's cgroup, and everything it starts inherits it; the
        // supervisor stays out: a fork of the host, its resident size would make it the
        // memory controller's first victim, ending the command with no word of why.
        for procs in cgroup_procs {
            if write_file(procs, b"0").is_err() {
                return Err(fail(Stage::Cgroup as u32));
            }
        }
        // A session of its own, so no controlling terminal: the operator's terminal is not
        // reachable through `/dev/tty`, nor by `TIOCSTI` on a descriptor of it.
        if libc::setsid() == -1 {
            return Err(fail(Stage::NewSession as u32));
        }
        // A fresh anonymous session keyring: the host's holds keys of the operator's login.
        if libc::syscall(
            libc::SYS_keyctl,
            libc::KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        ) == -1
        {
            return Err(fail(Stage::SessionKeyring as u32));
        }
        // Whatever the host inherited without close-on-exec (a terminal, a socket) is
        // closed at exec; std's own pipes and `step_fd` are close-on-exec already, and stay
        // usable until then.
        if libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC as libc::c_uint,
        ) != 0
        {
            return Err(fail(Stage::CloseInherited as u32));
        }
        build_root(plan).map_err(fail)?;
        for (resource, value) in plan.rlimits {
            let limit = libc::rlimit { rlim_cur: value, rlim_max: value };
            if libc::setrlimit(resource_id(resource), &limit) != 0 {
                return Err(fail(Stage::Rlimits as u32));
            }
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(fail(Stage::NoNewPrivs as u32));
        }
        // Last: the steps above use calls the filters refuse (keyctl).
        for filter in [&filters.refused, &filters.clone3] {
            if seccompiler::apply_filter(filter).is_err() {
                return Err(fail(Stage::Seccomp as u32));
            }
        }
    }
    Ok(())
}

/// The supervisor: holds nothing of the parent's, waits for PID 1, exits with its status
/// (128 + the signal when a signal ended it).
unsafe fn supervise(pid1: libc::pid_t, keep: RawFd, backstop_secs: u32) -> ! {
    // SAFETY: system calls only; `_exit` ends the process without running anything of std.
    unsafe {
        // The parent's signal handlers are still installed here (no exec happened).
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        libc::signal(libc::SIGALRM, libc::SIG_DFL);
        // The output pipes and std's exec-error pipe among them: the parent sees the end
        // of the output, and of the spawn, when PID 1's copies close.
        let keep = keep as libc::c_uint;
        if keep > 0 {
            libc::syscall(libc::SYS_close_range, 0 as libc::c_uint, keep - 1, 0 as libc::c_uint);
        }
        libc::syscall(libc::SYS_close_range, keep + 1, libc::c_uint::MAX, 0 as libc::c_uint);
        libc::alarm(backstop_secs.max(1));
        let mut status = 0;
        loop {
            let waited = libc::waitpid(pid1, &mut status, 0);
            if waited == pid1 {
                break;
            }
            if waited == -1 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else if libc::WIFSIGNALED(status) {
            128 + libc::WTERMSIG(status)
        } else {
            127
        };
        libc::_exit(code)
    }
}

/// Builds the sandbox's tree and moves PID 1 into it; the error's code is the step's.
unsafe fn build_root(plan: &Plan) -> Result<(), u32> {
    let step = |ok: bool, stage: Stage| if ok { Ok(()) } else { Err(stage as u32) };
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: system calls on static C strings and the plan's.
    unsafe {
        // Nothing we mount may propagate back to the host.
        step(
            libc::mount(null, c"/".as_ptr(), null, libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()) == 0,
            Stage::PrivateMounts,
        )?;
        step(mount_tmpfs(c"/tmp", c"mode=0755,size=64k", 0), Stage::BaseTmpfs)?;
        step(ensure_dir(c"/tmp/newroot") && ensure_dir(c"/tmp/oldroot"), Stage::BaseFolders)?;
        step(pivot_root(c"/tmp", c"/tmp/oldroot") && libc::chdir(c"/".as_ptr()) == 0, Stage::FirstPivot)?;
        step(mount_tmpfs(c"/newroot", c"mode=0755", 0), Stage::NewRoot)?;
        for (index, op) in plan.ops.iter().enumerate() {
            if !run_op(op) {
                return Err(super::child::MOUNT_OPS + index as u32);
            }
        }
        step(libc::chdir(c"/newroot".as_ptr()) == 0 && pivot_root(c".", c"."), Stage::SecondPivot)?;
        step(
            libc::umount2(c".".as_ptr(), libc::MNT_DETACH) == 0 && libc::chdir(c"/".as_ptr()) == 0,
            Stage::DetachOldRoot,
        )?;
        step(remount(c"/", true, false), Stage::ReadOnlyRoot)?;
        step(libc::chdir(plan.workdir.as_ptr()) == 0, Stage::Workdir)?;
    }
    Ok(())
}

unsafe fn run_op(op: &MountOp) -> bool {
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: system calls on the op's C strings.
    unsafe {
        match op {
            MountOp::Dir(path) => ensure_dir(path),
            MountOp::File(path) => {
                let fd = libc::open(path.as_ptr(), libc::O_CREAT | libc::O_RDONLY | libc::O_CLOEXEC, 0o644);
                if fd >= 0 {
                    libc::close(fd);
                    true
                } else {
                    exists(path)
                }
            }
            MountOp::Symlink { target, link } => {
                libc::symlink(target.as_ptr(), link.as_ptr()) == 0
                    || *libc::__errno_location() == libc::EEXIST
            }
            MountOp::Bind { source, target, read_only, devices } => {
                libc::mount(
                    source.as_ptr(),
                    target.as_ptr(),
                    null,
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ) == 0
                    && remount(target, *read_only, *devices)
            }
            MountOp::BindFolder { components, target, read_only } => {
                bind_folder(components, target) && remount(target, *read_only, false)
            }
            MountOp::RemountReadOnly(target) => remount(target, true, false),
            MountOp::Tmpfs { target, options, read_only } => {
                mount_tmpfs(target, options, if *read_only { libc::MS_RDONLY } else { 0 })
            }
            MountOp::Proc { target, pid_max_file, pid_max } => {
                let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                let mounted =
                    libc::mount(c"proc".as_ptr(), target.as_ptr(), c"proc".as_ptr(), flags, std::ptr::null())
                        == 0;
                // Best effort: before Linux 6.14 pid_max is one for all namespaces.
                let _ = mounted && write_file(pid_max_file, pid_max).is_ok();
                mounted
                    && libc::mount(
                        null,
                        target.as_ptr(),
                        null,
                        flags | libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY,
                        std::ptr::null(),
                    ) == 0
            }
        }
    }
}

/// Opens the host's folder of `components` under `/oldroot` one component at a time, never
/// following a symbolic link, and binds what it opened (through its `/proc/self/fd` entry,
/// which names the opened folder, not a path looked up again) at `target`.
unsafe fn bind_folder(components: &[std::ffi::CString], target: &CStr) -> bool {
    const PREFIX: &[u8] = b"/oldroot/proc/self/fd/";
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: system calls on the plan's C strings and a stack buffer we fill; every
    // descriptor opened here is closed here.
    unsafe {
        let mut fd = libc::open(c"/oldroot".as_ptr(), super::nofollow::WALK_FLAGS);
        for name in components {
            if fd < 0 {
                return false;
            }
            let next = libc::openat(fd, name.as_ptr(), super::nofollow::WALK_FLAGS);
            let errno = *libc::__errno_location();
            libc::close(fd);
            *libc::__errno_location() = errno;
            fd = next;
        }
        if fd < 0 {
            return false;
        }
        // "/oldroot/proc/self/fd/<fd>\0", written without allocating.
        let mut source = [0u8; 48];
        source[..PREFIX.len()].copy_from_slice(PREFIX);
        let mut digits = [0u8; 10];
        let mut count = 0;
        let mut rest = fd as u32;
        loop {
            digits[count] = b'0' + (rest % 10) as u8;
            count += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        for (index, digit) in digits[..count].iter().rev().enumerate() {
            source[PREFIX.len() + index] = *digit;
        }
        let bound = libc::mount(
            source.as_ptr().cast(),
            target.as_ptr(),
            null,
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ) == 0;
        let errno = *libc::__errno_location();
        libc::close(fd);
        *libc::__errno_location() = errno;
        bound
    }
}

/// Remounts the mount at `target` `nosuid` (and `nodev` unless `devices`; read-only when
/// `read_only`), keeping the flags it has: in a user namespace those the host set are
/// locked, and a remount that drops one fails.
unsafe fn remount(target: &CStr, read_only: bool, devices: bool) -> bool {
    const KEPT: libc::c_ulong = libc::MS_RDONLY
        | libc::MS_NOSUID
        | libc::MS_NODEV
        | libc::MS_NOEXEC
        | libc::MS_NOATIME
        | libc::MS_NODIRATIME
        | libc::MS_RELATIME;
    // SAFETY: statvfs fills the zeroed buffer we own (glibc takes the flags from the
    // statfs system call); mount reads C strings.
    unsafe {
        let mut stats: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(target.as_ptr(), &mut stats) != 0 {
            return false;
        }
        // The ST_* flags have the values of the MS_* ones.
        let mut flags =
            (stats.f_flag as libc::c_ulong & KEPT) | libc::MS_BIND | libc::MS_REMOUNT | libc::MS_NOSUID;
        if !devices {
            flags |= libc::MS_NODEV;
        }
        if read_only {
            flags |= libc::MS_RDONLY;
        }
        let null = std::ptr::null::<libc::c_char>();
        libc::mount(null, target.as_ptr(), null, flags, std::ptr::null()) == 0
    }
}

unsafe fn mount_tmpfs(target: &CStr, options: &CStr, extra: libc::c_ulong) -> bool {
    // SAFETY: mount reads C strings.
    unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | extra,
            options.as_ptr().cast(),
        ) == 0
    }
}

unsafe fn pivot_root(new_root: &CStr, put_old: &CStr) -> bool {
    // SAFETY: the system call reads two C strings.
    unsafe { libc::syscall(libc::SYS_pivot_root, new_root.as_ptr(), put_old.as_ptr()) == 0 }
}

/// A folder at `path`, made if missing; one that exists on a read-only mount is fine.
unsafe fn ensure_dir(path: &CStr) -> bool {
    // SAFETY: mkdir reads a C string.
    unsafe { libc::mkdir(path.as_ptr(), 0o755) == 0 || exists(path) }
}

/// Whether `path` exists, after a call on it failed; when it does not, errno is left as
/// that call set it, so the report names the first cause.
unsafe fn exists(path: &CStr) -> bool {
    // SAFETY: access reads a C string; errno is this thread's.
    unsafe {
        let errno = *libc::__errno_location();
        let found = libc::access(path.as_ptr(), libc::F_OK) == 0;
        *libc::__errno_location() = errno;
        found
    }
}

/// Writes `bytes` to the file at `path` in one write.
unsafe fn write_file(path: &CStr, bytes: &[u8]) -> Result<(), ()> {
    // SAFETY: open/write/close on a C string and a buffer we hold.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let errno = *libc::__errno_location();
        libc::close(fd);
        *libc::__errno_location() = errno;
        if written == bytes.len() as isize { Ok(()) } else { Err(()) }
    }
}

/// Tells the parent which step failed and why: the code and the errno, little-endian.
fn report(step_fd: RawFd, stage: u32, errno: i32) {
    let mut message = [0u8; 8];
    message[..4].copy_from_slice(&stage.to_le_bytes());
    message[4..].copy_from_slice(&errno.to_le_bytes());
    // SAFETY: a write of a local buffer; if it fails, std still reports the errno.
    unsafe {
        libc::write(step_fd, message.as_ptr().cast(), message.len());
    }
}

fn resource_id(resource: RlimitResource) -> libc::__rlimit_resource_t {
    match resource {
        RlimitResource::Cpu => libc::RLIMIT_CPU,
        RlimitResource::AddressSpace => libc::RLIMIT_AS,
        RlimitResource::Processes => libc::RLIMIT_NPROC,
        RlimitResource::FileSize => libc::RLIMIT_FSIZE,
    }
}
