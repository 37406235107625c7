//! A Python folder's sources compiled before its build: a syntax error is reported as Python
//! reports it (the file, the line, the text, a caret and the message), not at the end of a
//! componentize-py run, under that tool's traceback, seconds later.
//!
//! The check runs the toolchain's interpreter, which may be older than the one the component
//! carries ([`COMPONENT_PYTHON`]): code in newer syntax (a 3.12 f-string, a `type` alias)
//! fails to compile there and is valid all the same. So an error found by an older
//! interpreter is only believed once componentize-py refuses the folder too.

use std::path::Path;
use std::sync::Mutex;

use super::super::command::{self, BuildSandbox, Step};
use crate::config::PluginSource;
use crate::unpoisoned::LockUnpoisoned as _;

/// The Python the component carries, whose syntax the plugin may use.
pub(super) const COMPONENT_PYTHON: (u32, u32) = (3, 14);

/// Compiles every `.py` file under the folder (argv[1]), not under a folder named in argv[3:]
/// (the build outputs and installed packages), in memory: nothing is run or written. On the
/// first error, prints it as Python does, its file named from the folder, and exits 1 when
/// this interpreter knows the syntax of the one named in argv[2], else 2.
const CHECK: &str = r#"
import os, sys, traceback
root, (major, minor), skipped = sys.argv[1], map(int, sys.argv[2].split(".")), set(sys.argv[3:])
for folder, folders, files in os.walk(root):
    folders[:] = sorted(name for name in folders if name not in skipped)
    for name in sorted(files):
        if not name.endswith(".py"):
            continue
        path = os.path.join(folder, name)
        with open(path, "rb") as source:
            text = source.read()
        try:
            compile(text, os.path.relpath(path, root), "exec", dont_inherit=True)
        except SyntaxError as error:
            sys.stdout.write("".join(traceback.format_exception_only(type(error), error)))
        except ValueError as error:
            sys.stdout.write(f"{os.path.relpath(path, root)}: {error}\n")
        else:
            continue
        sys.exit(1 if sys.version_info[:2] >= (major, minor) else 2)
"#;

/// What the check found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Checked {
    /// Every file compiles.
    Clean,
    /// A syntax error, as Python words it, found by an interpreter that knows the component's
    /// syntax: the folder is refused at once.
    Error(String),
    /// An error found by an older interpreter, which newer syntax would explain: believed if
    /// componentize-py refuses the folder too.
    Doubtful(String),
    /// The check itself did not finish (its output is logged): componentize-py decides.
    Unchecked,
}

/// Compiles the sources of the Python folder `dir` in `step`, which runs the toolchain's
/// interpreter as the build's steps do (the toolchain read-only, no network), the folder
/// read-only.
pub(super) fn check(sandbox: &BuildSandbox, step: Step, dir: &Path) -> Result<Checked, String> {
    let version = format!("{}.{}", COMPONENT_PYTHON.0, COMPONENT_PYTHON.1);
    // -I: isolated from the environment and the user's site packages; -B: no bytecode.
    let step = step.read_only(dir).arg("-I").arg("-B").arg("-c").arg(CHECK).arg(dir).arg(version);
    let step = step.args(PluginSource::NOT_SOURCE);
    let name = format!("checking the Python of {}", dir.display());
    let lines = Mutex::new(Vec::<String>::new());
    let status =
        command::run_lines(sandbox, step, &name, &|_, line| lines.lock_unpoisoned().push(line.to_owned()))?;
    let lines = lines.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    Ok(verdict(status, &lines))
}

/// What the check's exit `status` and output `lines` say.
fn verdict(status: Option<i32>, lines: &[String]) -> Checked {
    let said = || lines.join("\n").trim_end().to_owned();
    match status {
        Some(0) => Checked::Clean,
        Some(1) => Checked::Error(said()),
        Some(2) => Checked::Doubtful(said()),
        _ => {
            tracing::debug!(output = %said(), "the Python syntax check did not finish");
            Checked::Unchecked
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn an_error_is_final_only_from_an_interpreter_that_knows_the_components_syntax() {
        let error = "  File \"plugin.py\", line 3\n    def f(:\n          ^\nSyntaxError: invalid syntax\n";
        assert_eq!(verdict(Some(0), &[]), Checked::Clean);
        assert_eq!(verdict(Some(1), &lines(error)), Checked::Error(error.trim_end().to_owned()));
        assert_eq!(verdict(Some(2), &lines(error)), Checked::Doubtful(error.trim_end().to_owned()));
        let crashed = lines("Fatal Python error: init_fs_encoding");
        assert_eq!(
            verdict(Some(101), &crashed),
            Checked::Unchecked,
            "a check that did not finish decides nothing"
        );
        assert_eq!(verdict(None, &[]), Checked::Unchecked);
    }
}
