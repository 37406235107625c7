//! Starting a spec, collecting its output under a cap, and ending it at its deadline.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use super::child::{self, MOUNT_OPS, Stage};
use super::plan::Plan;
use super::{Confinement, Sandbox, SandboxError, SandboxSpec, cgroup, masks, seccomp};

/// How long a run may take and how much of its output is kept.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    pub timeout: Duration,
    /// Bytes of stdout, and separately of stderr, kept; the rest is read and dropped.
    pub max_output_bytes: usize,
}

/// How a run ended.
#[derive(Debug, Clone, Default)]
pub struct RunOutput {
    /// The exit code; 128 + the signal when a signal ended a confined program; `None` when
    /// it was killed at its deadline (or, unconfined, by a signal).
    pub status: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub timed_out: bool,
    /// Whether stdout or stderr was cut at `max_output_bytes`.
    pub truncated: bool,
}

/// Seconds past the deadline after which the supervisor gives up by itself, should the
/// host be gone and unable to kill it.
const BACKSTOP_GRACE_SECS: u64 = 5;

impl Sandbox {
    /// Runs `spec` until it exits or `limits.timeout` passes; then everything it started is
    /// killed. Stdin is empty.
    pub async fn run(&self, spec: &SandboxSpec, limits: RunLimits) -> Result<RunOutput, SandboxError> {
        // Held to the end of the run: dropping it removes the command's cgroup.
        let (mut child, _cgroup) = self.spawn(spec, limits.timeout)?;
        let stdout = tokio::spawn(read_capped(child.stdout.take(), limits.max_output_bytes));
        let stderr = tokio::spawn(read_capped(child.stderr.take(), limits.max_output_bytes));
        let group = child.id();
        let (status, timed_out) = match tokio::time::timeout(limits.timeout, child.wait()).await {
            Ok(status) => (status.map_err(SandboxError::Wait)?.code(), false),
            Err(_) => {
                // Confined, killing the supervisor kills PID 1 (its death signal) and with
                // it the namespace; unconfined, the group is all we can reach.
                if self.confinement == Confinement::None
                    && let Some(group) = group
                {
                    child::kill_group(group);
                }
                let _ = child.kill().await;
                (None, true)
            }
        };
        if self.confinement == Confinement::None
            && let Some(group) = group
        {
            // What it left running in its group would hold the pipes open.
            child::kill_group(group);
        }
        let (stdout, stdout_cut) = stdout.await.unwrap_or_default();
        let (stderr, stderr_cut) = stderr.await.unwrap_or_default();
        Ok(RunOutput { status, stdout, stderr, timed_out, truncated: stdout_cut || stderr_cut })
    }

    pub(super) fn spawn(
        &self,
        spec: &SandboxSpec,
        timeout: Duration,
    ) -> Result<(tokio::process::Child, Option<cgroup::Leaf>), SandboxError> {
        let mut command = std::process::Command::new(&spec.program);
        command
            .args(&spec.args)
            .env_clear()
            .envs(spec.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Out of the terminal's process group: Ctrl-C at the console is not for it.
            .process_group(0);
        let start_error =
            |source| SandboxError::Start { program: spec.program.display().to_string(), source };
        match self.confinement {
            Confinement::None => {
                if let Some(dir) = &spec.workdir {
                    command.current_dir(dir);
                }
                let mut command = tokio::process::Command::from(command);
                command.kill_on_drop(true);
                Ok((command.spawn().map_err(start_error)?, None))
            }
            Confinement::Namespaces => {
                let backstop = timeout.as_secs().saturating_add(BACKSTOP_GRACE_SECS + 1);
                let plan = Plan::build(
                    spec,
                    child::host_ids(),
                    masks::etc_masks(),
                    u32::try_from(backstop).unwrap_or(u32::MAX),
                )?;
                let plan = Arc::new(plan);
                let filters = seccomp::filters().map_err(|e| start_error(std::io::Error::other(e)))?;
                let leaf = cgroup::hierarchy()
                    .map(|hierarchy| {
                        cgroup::Leaf::create(hierarchy, spec.rlimits.memory_mb, spec.rlimits.max_procs)
                    })
                    .transpose()
                    .map_err(|e| SandboxError::Setup {
                        step: "create the command's cgroup".into(),
                        source: std::io::Error::other(e),
                    })?;
                let procs = leaf.as_ref().map(|leaf| leaf.procs.clone()).unwrap_or_default();
                let (mut steps, step_writer) = std::io::pipe().map_err(start_error)?;
                child::install(&mut command, plan.clone(), filters, procs, step_writer.as_raw_fd());
                let mut command = tokio::process::Command::from(command);
                // The tool call dropped: killing the supervisor kills the namespace.
                command.kill_on_drop(true);
                let spawned = command.spawn();
                drop(step_writer);
                let spawned = spawned.map_err(|source| match failed_step(&mut steps, &plan) {
                    Some(step) => SandboxError::Setup { step, source },
                    None => start_error(source),
                })?;
                Ok((spawned, leaf))
            }
        }
    }
}

/// The step the child reported, if it reported one, named.
fn failed_step(steps: &mut impl Read, plan: &Plan) -> Option<String> {
    failed_step_code(steps).map(|code| step_name(code, plan))
}

/// The code of the step the child reported, if it reported one (the errno comes with the
/// spawn's error).
pub(super) fn failed_step_code(steps: &mut impl Read) -> Option<u32> {
    let mut message = [0u8; 8];
    steps.read_exact(&mut message).ok()?;
    Some(u32::from_le_bytes(message[..4].try_into().expect("4 bytes")))
}

pub(super) fn step_name(code: u32, plan: &Plan) -> String {
    if let Some(index) = code.checked_sub(MOUNT_OPS) {
        return plan
            .descriptions
            .get(index as usize)
            .cloned()
            .unwrap_or_else(|| format!("mount step {index}"));
    }
    match Stage::from_code(code) {
        Some(Stage::Unshare) => "unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | ...)".into(),
        Some(Stage::Setgroups) => "write deny to /proc/self/setgroups".into(),
        Some(Stage::UidMap) => "write /proc/self/uid_map".into(),
        Some(Stage::GidMap) => "write /proc/self/gid_map".into(),
        Some(Stage::LivenessPipe) => "pipe2".into(),
        Some(Stage::Fork) => "fork PID 1 of the new PID namespace".into(),
        Some(Stage::DeathSignal) => "prctl(PR_SET_PDEATHSIG)".into(),
        Some(Stage::PrivateMounts) => "make every mount private".into(),
        Some(Stage::BaseTmpfs) => "mount the staging tmpfs".into(),
        Some(Stage::BaseFolders) => "create the staging folders".into(),
        Some(Stage::FirstPivot) => "pivot_root into the staging tmpfs".into(),
        Some(Stage::NewRoot) => "mount the new root's tmpfs".into(),
        Some(Stage::SecondPivot) => "pivot_root into the new root".into(),
        Some(Stage::DetachOldRoot) => "detach the old root".into(),
        Some(Stage::ReadOnlyRoot) => "make the new root read-only".into(),
        Some(Stage::Workdir) => "chdir to the working folder".into(),
        Some(Stage::Rlimits) => "setrlimit".into(),
        Some(Stage::NoNewPrivs) => "prctl(PR_SET_NO_NEW_PRIVS)".into(),
        Some(Stage::NewSession) => "setsid".into(),
        Some(Stage::SessionKeyring) => "keyctl(KEYCTL_JOIN_SESSION_KEYRING)".into(),
        Some(Stage::CloseInherited) => "close_range(CLOSE_RANGE_CLOEXEC)".into(),
        Some(Stage::Seccomp) => "install the seccomp filter".into(),
        Some(Stage::Cgroup) => "join the command's cgroup".into(),
        None => format!("step {code}"),
    }
}

/// Reads a pipe to its end, keeping the first `cap` bytes; says whether any were dropped.
/// Reading on past the cap keeps a chatty child from blocking on a full pipe.
async fn read_capped(pipe: Option<impl AsyncRead + Unpin>, cap: usize) -> (Vec<u8>, bool) {
    let Some(mut pipe) = pipe else { return (Vec::new(), false) };
    let mut kept = Vec::new();
    let mut cut = false;
    let mut chunk = [0u8; 8192];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                let room = cap.saturating_sub(kept.len());
                if read > room {
                    cut = true;
                }
                kept.extend_from_slice(&chunk[..read.min(room)]);
            }
        }
    }
    (kept, cut)
}
