//! `run_skill_script`: runs a file under a skill's `scripts/` through the host's `process`
//! import, in its OS sandbox.
//!
//! The process sees the plugin's granted folders at their host paths, which the plugin does
//! not know (it sees them at their guest paths). So the script does not run where it lies: the
//! plugin reads `scripts/` through its own confined view and the command writes that copy into
//! the process's private `/tmp`, then runs the script from there, with `SKILL_DIR` naming the
//! copy and the working folder the host gives processes (the plugin's first writable granted
//! folder, the workspace). What runs is exactly what lies under the skill's `scripts/`, wherever
//! the skill's folder is granted.

use std::path::Path;

use agent_host_sdk::Context;
use agent_host_sdk::process::{self, RunOutput};
use folder_catalog::FolderCatalog;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::{confine, files};

/// The most bytes of scripts one run carries: the command line is one argument of `sh -c`,
/// which Linux holds to 128 KiB.
const MAX_CARRIED: usize = 96 * 1024;
/// The most bytes the whole command line may take.
const MAX_COMMAND: usize = 120 * 1024;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptArgs {
    /// The skill's name
    skill: String,
    /// The script, relative to the skill's folder (scripts/extract.py) or to its scripts/ folder
    script: String,
    /// The script's arguments, each passed as one argument
    #[serde(default)]
    args: Vec<String>,
}

/// A file to write into the copy: its path under the copy, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    pub path: String,
    pub text: String,
}

pub fn run_skill_script(ctx: &Context<Config>, args: ScriptArgs) -> Result<String, String> {
    let catalog = Catalog::current(&ctx.config)?;
    let skill = catalog.find(args.skill.trim())?;
    let in_skill = |why: String| format!("skill `{}`: {why}", skill.name);
    let root = Path::new(&skill.dir);
    let shown = args.script.trim();
    let script = script_path(root, shown).map_err(in_skill)?;
    let text = carried_text(&root.join(&script), shown).map_err(in_skill)?;
    let (carried, left_out) = with_siblings(root, Carried { path: script.clone(), text });
    let command = command(&carried, &script, &args.args).map_err(in_skill)?;
    let timeout_ms = ctx.config.script_timeout_ms;
    let max_output = ctx.config.script_output_bytes();
    let output = process::run(&command, timeout_ms, max_output)
        .map_err(|error| format!("cannot run `{shown}` of skill `{}`: {error}", skill.name))?;
    Ok(report(&output, timeout_ms, max_output, left_out))
}

/// The script's real path relative to the skill's folder: named under `scripts/` (the prefix
/// may be left off), confined to the folder, and still under `scripts/` once links are
/// followed.
pub fn script_path(root: &Path, shown: &str) -> Result<String, String> {
    let mut parts = confine::relative_parts(shown)?;
    if parts[0] != "scripts" {
        // `extract.py` for `scripts/extract.py`, but `references/x.md` stays what it says.
        let under = format!("scripts/{}", parts.join("/"));
        if std::fs::symlink_metadata(root.join(&under)).is_err() {
            return Err(format!("`{shown}` is not under scripts/; only a skill's scripts run"));
        }
        parts.insert(0, "scripts".to_owned());
    }
    let real = confine::resolve(root, &parts, shown)?;
    if real.len() < 2 || real[0] != "scripts" {
        return Err(format!(
            "`{shown}` leads to `{}`, which is not under scripts/; only a skill's scripts run",
            real.join("/")
        ));
    }
    Ok(real.join("/"))
}

/// A script's text, which must fit a command line: UTF-8, no NUL, within the carried cap.
fn carried_text(at: &Path, shown: &str) -> Result<String, String> {
    let text = confine::read_text(at, shown, MAX_CARRIED as u64)?;
    if text.contains('\0') {
        return Err(format!("`{shown}` holds a NUL byte; only text scripts run"));
    }
    Ok(text)
}

/// The script and the other regular files of `scripts/` (which it may import or read), as
/// many as fit within [`MAX_CARRIED`]; how many were left out.
fn with_siblings(root: &Path, script: Carried) -> (Vec<Carried>, usize) {
    let mut total = script.text.len();
    let mut carried = vec![script];
    let mut left_out = 0;
    let (entries, more) = files::list(&root.join("scripts"));
    for entry in entries.into_iter().filter(|entry| entry.regular) {
        let path = format!("scripts/{}", entry.path);
        if path == carried[0].path {
            continue;
        }
        match carried_text(&root.join(&path), &path) {
            Ok(text) if total + text.len() <= MAX_CARRIED => {
                total += text.len();
                carried.push(Carried { path, text });
            }
            _ => left_out += 1,
        }
    }
    (carried, left_out + usize::from(more))
}

/// The `sh -c` line that writes `carried` under a fresh folder in `/tmp` and runs `script`
/// (one of them) with `args`.
pub fn command(carried: &[Carried], script: &str, args: &[String]) -> Result<String, String> {
    let mut line = String::from(
        "umask 077\nSKILL_DIR=$(mktemp -d \"${TMPDIR:-/tmp}/skill.XXXXXX\") || exit 125\nexport SKILL_DIR\n",
    );
    for file in carried {
        if let Some((folder, _)) = file.path.rsplit_once('/') {
            line.push_str(&format!("mkdir -p \"$SKILL_DIR\"/{}\n", quote(folder)));
        }
        line.push_str(&format!("printf '%s' {} > \"$SKILL_DIR\"/{}\n", quote(&file.text), quote(&file.path)));
    }
    line.push_str("chmod -R u+x \"$SKILL_DIR/scripts\"\n");
    line.push_str(&format!("exec \"$SKILL_DIR\"/{}", quote(script)));
    for arg in args {
        if arg.contains('\0') {
            return Err("an argument holds a NUL character".to_owned());
        }
        line.push(' ');
        line.push_str(&quote(arg));
    }
    if line.len() > MAX_COMMAND {
        return Err(format!(
            "the script and its arguments take {} bytes as a command line, over the {MAX_COMMAND} the sandbox takes",
            line.len()
        ));
    }
    Ok(line)
}

/// `text` as one shell word: single-quoted, each `'` closed, escaped and reopened.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The result text the model sees, as the shell tool writes it, and what of `scripts/` was
/// left out of the run.
fn report(output: &RunOutput, asked_ms: u64, max_output: u64, left_out: usize) -> String {
    let mut text = process::report(output, asked_ms, max_output);
    if left_out > 0 {
        text.push_str(&format!(
            "\nnote: {left_out} other files of scripts/ were not carried into the run (over {MAX_CARRIED} bytes, \
             or not text)"
        ));
    }
    text
}
