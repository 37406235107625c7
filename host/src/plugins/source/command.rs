//! One step of a build: a command run to its end, its output kept for the error message.

use crate::unpoisoned::LockUnpoisoned as _;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

/// How many of a failed step's last output lines its error carries.
const ERROR_LINES: usize = 40;

/// Runs `command`, naming it `step` in errors. Both its streams are read to their end (a full
/// pipe would stall it); a line that `reported` picks out is passed on to `progress` as it
/// comes. On failure, the error holds the step's last lines, stdout and stderr interleaved
/// as they were read, since compilers write errors to either.
pub(super) fn run(
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
    let shown: Vec<&str> = lines.iter().map(String::as_str).filter(|line| !line.trim().is_empty()).collect();
    let tail = shown[shown.len().saturating_sub(ERROR_LINES)..].join("\n");
    Err(format!("{step} failed ({status}):\n{tail}"))
}
