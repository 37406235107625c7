//! One step of a build, run in the OS sandbox (`[runtime] sandbox`): a plugin folder is
//! somebody else's code, and its build runs some of it (a crate's build scripts and proc
//! macros, a Python package's build backend, whatever a bundler is told to read). Each step
//! sees the system folders, the folders it names read-only or writable, a private `/tmp`,
//! none of the host's environment but what it sets, and the network only when it fetches
//! from a package registry (and then runs none of the folder's code). Its output is kept
//! for the error message.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::sandbox::{Rlimits, Sandbox, SandboxSpec, Stream};
use crate::unpoisoned::LockUnpoisoned as _;

/// How many of a failed step's last output lines its error carries.
const ERROR_LINES: usize = 40;

/// How long one step may take: a cold build of a crate's dependencies on a slow machine.
const STEP_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// What one step may use. Compilers, V8 and wasmtime reserve far more address space than
/// they touch, so the address space is not capped (neither was a build before it ran
/// confined); the other limits stop a runaway step, not a large one.
const STEP_RLIMITS: Rlimits =
    Rlimits { cpu_secs: 30 * 60, memory_mb: u64::MAX >> 20, max_procs: 1024, file_mb: 8192 };

/// The system folders' programs, where a step finds `env`, `sh`, `git` and `node`.
const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Host variables a step that fetches from a registry gets: how this machine reaches a
/// registry (proxies, certificates, mirrors), the operator's settings rather than secrets.
const REGISTRY_ENV: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_CERT",
    "PIP_TRUSTED_HOST",
    "PIP_DEFAULT_TIMEOUT",
    "CARGO_HTTP_CAINFO",
    "CARGO_HTTP_PROXY",
    "CARGO_REGISTRIES_CRATES_IO_PROTOCOL",
];

/// Where every step of a plugin folder's build runs: the OS sandbox, and the deployment's own
/// files (the session store, the compile cache and its key) that a step must not see even
/// when they lie inside a folder it is shown.
#[derive(Debug, Clone)]
pub struct BuildSandbox {
    pub sandbox: Sandbox,
    pub hidden: Vec<PathBuf>,
}

impl BuildSandbox {
    /// The namespace sandbox with nothing more to hide: a build outside any deployment.
    pub fn confined() -> Result<Self, crate::sandbox::SandboxUnavailable> {
        Ok(Self { sandbox: Sandbox::confined()?, hidden: Vec::new() })
    }
}

/// A step being put together: the program, what it sees, and where it starts.
pub(super) struct Step {
    spec: SandboxSpec,
    /// The `PATH` it gets: `SYSTEM_PATH` after the folders given.
    path: Vec<PathBuf>,
    /// Folders it sees, and whether it may write them.
    folders: Vec<(PathBuf, bool)>,
    /// Files and folders shown empty, where they lie inside a folder it sees.
    hidden: Vec<PathBuf>,
}

impl Step {
    /// `program` (an absolute path) started in `workdir`, with `HOME` and `TMPDIR` the
    /// private `/tmp`, no network and no folder beyond the system's.
    pub fn new(program: &Path, workdir: &Path) -> Self {
        let spec = SandboxSpec::new(program)
            .workdir(workdir)
            .env("HOME", "/tmp")
            // Tools that find their cache by the user database would look in the home of
            // whoever uid 1000 is on this machine.
            .env("XDG_CACHE_HOME", "/tmp/.cache")
            .env("XDG_CONFIG_HOME", "/tmp/.config")
            .env("TMPDIR", "/tmp")
            .env("LANG", "C.UTF-8")
            .rlimits(STEP_RLIMITS);
        Self { spec, path: Vec::new(), folders: Vec::new(), hidden: Vec::new() }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.spec = self.spec.arg(arg);
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.spec = self.spec.args(args);
        self
    }

    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.spec = self.spec.env(name, value);
        self
    }

    /// Puts `folder` on `PATH`, before the system's folders.
    pub fn on_path(mut self, folder: &Path) -> Self {
        self.path.push(folder.to_path_buf());
        self
    }

    /// Shows `folder` (when it exists) read-only.
    pub fn read_only(mut self, folder: &Path) -> Self {
        self.folders.push((folder.to_path_buf(), false));
        self
    }

    /// Shows `folder` (when it exists) writable.
    pub fn writable(mut self, folder: &Path) -> Self {
        self.folders.push((folder.to_path_buf(), true));
        self
    }

    /// Shows `path` (a file or a folder) as empty where a folder the step sees holds it: a
    /// secret (a registry token, the session store).
    pub fn hide(mut self, path: &Path) -> Self {
        self.hidden.push(path.to_path_buf());
        self
    }

    /// Gives the step the network and how this machine reaches a registry.
    pub fn fetching(mut self) -> Self {
        self.spec = self.spec.network(true);
        for name in REGISTRY_ENV {
            if let Some(value) = std::env::var_os(name) {
                self.spec = self.spec.env(*name, value);
            }
        }
        self
    }

    /// The spec to run: folders canonical (the sandbox refuses a path through a link), each
    /// once, writable when any mention of it is; what is hidden covered, and the user
    /// database replaced (`scratch` holds what covers them); `PATH` set.
    fn finish(self, scratch: &Scratch) -> SandboxSpec {
        let mut folders: Vec<(PathBuf, bool)> = Vec::new();
        for (folder, write) in self.folders {
            let Ok(folder) = std::fs::canonicalize(&folder) else { continue };
            match folders.iter_mut().find(|(seen, _)| *seen == folder) {
                Some((_, seen_write)) => *seen_write |= write,
                None => folders.push((folder, write)),
            }
        }
        // Parents before the folders inside them, as the sandbox binds them.
        folders.sort_by_key(|(folder, _)| folder.components().count());
        let mut spec = self.spec;
        for (folder, write) in &folders {
            spec = if *write { spec.read_write(folder) } else { spec.read_only(folder) };
        }
        for hidden in self.hidden {
            let Ok(hidden) = std::fs::canonicalize(&hidden) else { continue };
            if !folders.iter().any(|(folder, _)| hidden.starts_with(folder)) {
                continue;
            }
            let cover = if hidden.is_dir() { &scratch.empty } else { Path::new("/dev/null") };
            spec = spec.bind_ro(cover, hidden);
        }
        let mut path: Vec<String> = self.path.iter().map(|folder| folder.display().to_string()).collect();
        path.push(SYSTEM_PATH.to_owned());
        spec.bind_ro(&scratch.passwd, "/etc/passwd").env("PATH", path.join(":"))
    }
}

/// What covers parts of a step's tree, for the length of its run: an empty folder, and a
/// user database whose user 1000 (the sandbox's) has `/tmp` for a home. A tool that finds
/// its cache by the user database rather than `HOME` (componentize-js runs wizer with an
/// environment of its own) would otherwise try a home of this machine's uid 1000, which
/// the sandbox does not show.
struct Scratch {
    _folder: tempfile::TempDir,
    empty: PathBuf,
    passwd: PathBuf,
}

impl Scratch {
    fn new() -> std::io::Result<Self> {
        let folder = tempfile::tempdir()?;
        let empty = folder.path().join("empty");
        std::fs::create_dir(&empty)?;
        let passwd = folder.path().join("passwd");
        std::fs::write(
            &passwd,
            "root:x:0:0:root:/root:/bin/sh\nbuild:x:1000:1000:plugin build:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        )?;
        Ok(Self { _folder: folder, empty, passwd })
    }
}

/// Runs `step` to its end in `sandbox`, naming it `name` in errors. A line that `reported`
/// picks out is passed on to `progress` as it comes. On failure, the error holds the step's
/// last lines, stdout and stderr interleaved as they were read, since compilers write errors
/// to either.
pub(super) fn run(
    sandbox: &BuildSandbox,
    step: Step,
    name: &str,
    reported: fn(&str) -> bool,
    progress: super::Progress<'_>,
) -> Result<String, String> {
    let lines = Mutex::new(Vec::<String>::new());
    let status = run_lines(sandbox, step, name, &|_, line| {
        if reported(line) {
            progress(line.trim());
        }
        lines.lock_unpoisoned().push(line.to_owned());
    })?;
    let lines = lines.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    if status == Some(0) {
        return Ok(lines.join("\n"));
    }
    Err(failure(name, status, lines.iter().map(String::as_str)))
}

/// The error of step `name` that ended with `status`, with the last of `lines` that are
/// not blank.
pub(super) fn failure<'a>(name: &str, status: Option<i32>, lines: impl Iterator<Item = &'a str>) -> String {
    let shown: Vec<&str> = lines.filter(|line| !line.trim().is_empty()).collect();
    let tail = shown[shown.len().saturating_sub(ERROR_LINES)..].join("\n");
    let how = match status {
        Some(code) => format!("exit status {code}"),
        None => {
            format!("killed: it ran past {} minutes or was ended by a signal", STEP_TIMEOUT.as_secs() / 60)
        }
    };
    format!("{name} failed ({how}):\n{tail}")
}

/// Runs `step` in `sandbox`, handing each line of its output to `line` as it comes; its exit
/// code. Builds run on blocking threads, so the sandbox's async run gets a runtime of its own.
pub(super) fn run_lines(
    sandbox: &BuildSandbox,
    step: Step,
    name: &str,
    line: &(dyn Fn(Stream, &str) + Sync),
) -> Result<Option<i32>, String> {
    let scratch = Scratch::new().map_err(|error| format!("cannot run {name}: {error}"))?;
    let mut step = step;
    for hidden in &sandbox.hidden {
        step = step.hide(hidden);
    }
    let spec = step.finish(&scratch);
    let sandbox = &sandbox.sandbox;
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| format!("cannot run {name}: {error}"))?;
                runtime
                    .block_on(sandbox.run_lines(&spec, STEP_TIMEOUT, line))
                    .map_err(|error| format!("cannot run {name} in the sandbox: {error}"))
            })
            .join()
            .unwrap_or_else(|_| Err(format!("{name}: the thread that ran it panicked")))
    })
}
