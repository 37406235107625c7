//! The system calls a sandboxed program is refused, as seccomp filters built once per
//! process (before any fork: the child only installs them).
//!
//! Refused with `EPERM`: the kernel keyrings (`keyctl`, `add_key`, `request_key`: keys are
//! per user, not per mount namespace, so a key the operator's user holds could be found),
//! `bpf`, `io_uring_*` (a second way into the kernel that bypasses this very filter's view
//! of each call), `TIOCSTI`/`TIOCLINUX` (typing into a terminal), and a nested user
//! namespace (`unshare` or `clone` with `CLONE_NEWUSER`: a fresh set of capabilities over
//! mounts and the kernel's namespaced interfaces). `clone3` passes its flags in memory,
//! which a filter cannot read, so it fails with `ENOSYS` and libc falls back to `clone`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

/// The filters to install, in order; each allows whatever it does not name.
#[derive(Debug)]
pub(super) struct Filters {
    pub refused: BpfProgram,
    pub clone3: BpfProgram,
}

/// Built on first use; an architecture seccompiler does not know is an error naming it.
pub(super) fn filters() -> Result<&'static Filters, String> {
    static FILTERS: OnceLock<Result<Filters, String>> = OnceLock::new();
    FILTERS.get_or_init(build).as_ref().map_err(Clone::clone)
}

fn error(e: impl std::fmt::Display) -> String {
    format!("building the seccomp filter: {e}")
}

fn build() -> Result<Filters, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| format!("no seccomp filter for this architecture: {e}"))?;
    let always = Vec::new();
    let with_flag = |arg: u8, flag: libc::c_int| -> Result<Vec<SeccompRule>, String> {
        let flag = flag as u64;
        let condition =
            SeccompCondition::new(arg, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(flag), flag)
                .map_err(error)?;
        Ok(vec![SeccompRule::new(vec![condition]).map_err(error)?])
    };
    let ioctl = |request: u64| -> Result<SeccompRule, String> {
        let condition =
            SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request).map_err(error)?;
        SeccompRule::new(vec![condition]).map_err(error)
    };
    let refused: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_keyctl, always.clone()),
        (libc::SYS_add_key, always.clone()),
        (libc::SYS_request_key, always.clone()),
        (libc::SYS_bpf, always.clone()),
        (libc::SYS_io_uring_setup, always.clone()),
        (libc::SYS_io_uring_enter, always.clone()),
        (libc::SYS_io_uring_register, always.clone()),
        (libc::SYS_unshare, with_flag(0, libc::CLONE_NEWUSER)?),
        // The flags are clone's first argument on every architecture we build for.
        (libc::SYS_clone, with_flag(0, libc::CLONE_NEWUSER)?),
        (libc::SYS_ioctl, vec![ioctl(libc::TIOCSTI)?, ioctl(libc::TIOCLINUX)?]),
    ]
    .into_iter()
    .collect();
    let refused = SeccompFilter::new(
        with_x32_numbers(refused),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(error)?;
    let clone3 = SeccompFilter::new(
        with_x32_numbers([(libc::SYS_clone3, always)].into_iter().collect()),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(error)?;
    Ok(Filters { refused: refused.try_into().map_err(error)?, clone3: clone3.try_into().map_err(error)? })
}

/// On x86-64, the same calls through the x32 ABI as well (their numbers with bit 30 set):
/// x32 shares x86-64's audit architecture, so the filter's architecture check lets them
/// through, and a kernel built with x32 would run them under numbers the filter never named.
fn with_x32_numbers(rules: BTreeMap<i64, Vec<SeccompRule>>) -> BTreeMap<i64, Vec<SeccompRule>> {
    if !cfg!(target_arch = "x86_64") {
        return rules;
    }
    const X32_SYSCALL_BIT: i64 = 0x4000_0000;
    let x32: Vec<_> = rules.iter().map(|(call, chain)| (call | X32_SYSCALL_BIT, chain.clone())).collect();
    rules.into_iter().chain(x32).collect()
}
