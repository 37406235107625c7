//! The pinned tools that build Python and TypeScript plugin folders, installed on first use
//! by the same script README names (`scripts/install-plugin-toolchains.sh`, carried in the
//! binary), so the versions have one home. The installer is the host's own script installing
//! pinned packages, not a plugin folder's code, so it runs natively (RELIABILITY.md).

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::unpoisoned::LockUnpoisoned as _;

const INSTALL_SCRIPT: &str = include_str!("../../../../scripts/install-plugin-toolchains.sh");

/// One language's installed tools.
pub(super) struct Toolchain {
    /// `python` or `typescript` under the toolchains folder.
    pub dir: PathBuf,
    /// What it holds, pinned versions in the script's words: part of every build's stamp, so
    /// a new toolchain rebuilds what the old one built.
    pub stamp: String,
}

impl Toolchain {
    /// A tool of a TypeScript toolchain (`tsc`, `esbuild`, `componentize-js`).
    pub fn node_bin(&self, tool: &str) -> PathBuf {
        self.dir.join("node_modules").join(".bin").join(tool)
    }

    /// A tool of a Python toolchain's virtual environment (`componentize-py`).
    pub fn venv_bin(&self, tool: &str) -> PathBuf {
        self.dir.join("venv").join("bin").join(tool)
    }
}

pub(super) use crate::config::toolchains_home as home;

/// The toolchain for `language`, installed first when it is missing or another version (a
/// download of a few minutes, once); reports the installer's lines to `progress`.
pub(super) fn ensure(language: &str, progress: super::Progress<'_>) -> Result<Toolchain, String> {
    let home = home();
    let mut command = Command::new("bash");
    command.arg("-c").arg(INSTALL_SCRIPT).arg("install-plugin-toolchains").arg(language);
    command.env("AGENT_HOST_TOOLCHAINS", &home);
    let reported = |line: &str| line.starts_with("install-plugin-toolchains:");
    let output = run_installer(command, &format!("installing the {language} toolchain"), reported, progress)?;
    let stamp = stamp_line(&output, language)
        .ok_or_else(|| format!("the {language} toolchain's installer did not say what it installed"))?;
    Ok(Toolchain { dir: home.join(language), stamp })
}

/// Runs the installer `command` to its end, its lines that `reported` picks out passed on to
/// `progress` as they come; its output, or an error with its last lines.
fn run_installer(
    mut command: Command,
    step: &str,
    reported: fn(&str) -> bool,
    progress: super::Progress<'_>,
) -> Result<String, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot run {step}: {error}"))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let lines = std::sync::Mutex::new(Vec::<String>::new());
    let read = |stream: &mut dyn Read| {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if reported(&line) {
                progress(line.trim());
            }
            lines.lock_unpoisoned().push(line);
        }
    };
    std::thread::scope(|scope| {
        let mut stderr = stderr;
        scope.spawn(move || read(&mut stderr));
        let mut stdout = stdout;
        read(&mut stdout);
    });
    let status = child.wait().map_err(|error| format!("{step}: {error}"))?;
    let lines = lines.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    if status.success() {
        return Ok(lines.join("\n"));
    }
    Err(super::command::failure(step, status.code(), lines.iter().map(String::as_str)))
}

/// The line `LANGUAGE STAMP` the installer ends with.
fn stamp_line(output: &str, language: &str) -> Option<String> {
    output.lines().rev().find_map(|line| line.strip_prefix(language)?.strip_prefix(' ')).map(str::to_owned)
}

/// Whether `path` exists, for tools a toolchain must hold.
pub(super) fn require(path: PathBuf) -> Result<PathBuf, String> {
    if path.exists() {
        Ok(path)
    } else {
        Err(format!("{} is missing: remove its toolchain's folder to reinstall it", path.display()))
    }
}
