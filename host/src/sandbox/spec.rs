//! What to run and what it may see: the builder callers fill before [`super::Sandbox::run`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::rlimits::Rlimits;

/// One program to run confined: its command line, environment, working folder, the host
/// folders it sees (at their host paths), extra read-only binds, network and rlimits.
///
/// Paths are host paths; the sandbox shows each at the same path inside. Give them
/// canonical (symlinks resolved once, by the caller): a folder whose path passes through a
/// symbolic link at run time is refused, since a link may have replaced a folder there.
#[derive(Debug, Clone)]
pub struct SandboxSpec {
    pub(super) program: PathBuf,
    pub(super) args: Vec<OsString>,
    pub(super) env: Vec<(OsString, OsString)>,
    pub(super) workdir: Option<PathBuf>,
    pub(super) folders: Vec<Folder>,
    pub(super) binds_ro: Vec<(PathBuf, PathBuf)>,
    pub(super) network: bool,
    pub(super) rlimits: Rlimits,
}

/// A host folder shown inside at its own path.
#[derive(Debug, Clone)]
pub(super) struct Folder {
    pub path: PathBuf,
    pub write: bool,
}

impl SandboxSpec {
    /// Runs `program` (an absolute path inside the sandbox, such as `/bin/sh`) with no
    /// arguments, an empty environment, no folders beyond the system ones, no network.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            workdir: None,
            folders: Vec::new(),
            binds_ro: Vec::new(),
            network: false,
            rlimits: Rlimits::default(),
        }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one variable; the process sees no others.
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// The folder the program starts in (`/` when unset).
    pub fn workdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workdir = Some(dir.into());
        self
    }

    /// Shows the host folder `dir` read-only at the same path.
    pub fn read_only(mut self, dir: impl Into<PathBuf>) -> Self {
        self.folders.push(Folder { path: dir.into(), write: false });
        self
    }

    /// Shows the host folder `dir` writable at the same path.
    pub fn read_write(mut self, dir: impl Into<PathBuf>) -> Self {
        self.folders.push(Folder { path: dir.into(), write: true });
        self
    }

    /// Places the host file or folder `source` read-only at `target` inside, over whatever
    /// is there (a recording `rm` over `/usr/bin/rm`). Applied after the folders. A
    /// `target` that does not exist inside is created, which fails (naming the step) when
    /// its folder is a read-only one.
    pub fn bind_ro(mut self, source: impl Into<PathBuf>, target: impl Into<PathBuf>) -> Self {
        self.binds_ro.push((source.into(), target.into()));
        self
    }

    /// Whether the program shares the host's network; without it, it has only a loopback
    /// interface of its own, down.
    pub fn network(mut self, on: bool) -> Self {
        self.network = on;
        self
    }

    pub fn rlimits(mut self, rlimits: Rlimits) -> Self {
        self.rlimits = rlimits;
        self
    }

    pub fn program(&self) -> &Path {
        &self.program
    }
}
