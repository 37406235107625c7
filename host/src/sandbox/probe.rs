//! Whether this kernel lets us build the sandbox, checked once per process by building it
//! for `sh -c 'exit 0'`, and what it lacks when not.

use std::os::fd::AsRawFd;
use std::process::Stdio;
use std::sync::{Arc, OnceLock};

use super::child::{self, MOUNT_OPS, Stage};
use super::plan::Plan;
use super::run::{failed_step_code, step_name};
use super::{SandboxSpec, SandboxUnavailable, masks, seccomp};

pub(super) fn check() -> Result<(), SandboxUnavailable> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE.get_or_init(probe).clone().map_err(SandboxUnavailable)
}

fn probe() -> Result<(), String> {
    let spec = SandboxSpec::new("/bin/sh").args(["-c", "exit 0"]);
    let plan = Plan::build(&spec, child::host_ids(), masks::etc_masks(), 30).map_err(|e| e.to_string())?;
    let plan = Arc::new(plan);
    let filters = seccomp::filters()?;
    let (mut steps, step_writer) = std::io::pipe().map_err(|e| format!("cannot make a pipe: {e}"))?;
    let mut command = std::process::Command::new(&spec.program);
    command.args(&spec.args).env_clear().stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    child::install(&mut command, plan.clone(), filters, Vec::new(), step_writer.as_raw_fd());
    let status = command.status();
    drop(step_writer);
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("a test command in the sandbox failed ({status})")),
        Err(error) => Err(match failed_step_code(&mut steps) {
            Some(code) => explain(code, &error, &plan),
            None => format!("cannot start /bin/sh in the sandbox: {error}"),
        }),
    }
}

/// What the kernel lacks, for the step that failed.
fn explain(code: u32, error: &std::io::Error, plan: &Plan) -> String {
    let step = step_name(code, plan);
    let errno = errno_name(error);
    match Stage::from_code(code) {
        Some(Stage::Unshare) => format!(
            "user namespaces are disabled: {step} failed with {errno} ({error}); see \
             kernel.unprivileged_userns_clone, user.max_user_namespaces and \
             kernel.apparmor_restrict_unprivileged_userns"
        ),
        Some(Stage::Setgroups | Stage::UidMap | Stage::GidMap) => {
            format!("cannot map the host's user into a user namespace: {step} failed with {errno} ({error})")
        }
        _ if code >= MOUNT_OPS && step.contains("/proc") => format!(
            "cannot {step}: {errno} ({error}); the host's /proc is partly covered (as in some \
             containers), so the kernel refuses a fresh one"
        ),
        _ => format!("the sandbox cannot be set up: {step} failed with {errno} ({error})"),
    }
}

fn errno_name(error: &std::io::Error) -> &'static str {
    match error.raw_os_error() {
        Some(libc::EPERM) => "EPERM",
        Some(libc::EACCES) => "EACCES",
        Some(libc::ENOSPC) => "ENOSPC",
        Some(libc::EINVAL) => "EINVAL",
        Some(libc::ENOSYS) => "ENOSYS",
        Some(libc::ENOENT) => "ENOENT",
        Some(libc::EROFS) => "EROFS",
        Some(libc::EBUSY) => "EBUSY",
        _ => "an error",
    }
}
