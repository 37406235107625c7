//! `agent-host init [DIR]`: a deployment from the binary alone. It writes the repository's
//! own `config.toml` (one home for the text: the file a checkout runs is the file `init`
//! writes), whose plugins are builtins, so the next `agent-host` there needs no toolchain and
//! no checkout: the offline demo (which the binary carries too), then the console.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::Status;

/// The stock deployment, as the repository ships it.
const SHIPPED_CONFIG: &str = include_str!("../../config.toml");

/// Writes `DIR/config.toml` (making `DIR` when it is missing) and says what to do next.
/// An existing file is never overwritten: that is bad input, and nothing is written.
pub fn run(dir: &Path) -> Status {
    match write_config(dir) {
        Ok(file) => {
            println!("{}", next_steps(dir, &file));
            Status::Done
        }
        Err((status, message)) => {
            eprintln!("error: {message}");
            status
        }
    }
}

fn write_config(dir: &Path) -> Result<PathBuf, (Status, String)> {
    let file = dir.join("config.toml");
    if file.symlink_metadata().is_ok() {
        return Err((
            Status::BadInput,
            format!(
                "{} exists; `agent-host init` never overwrites a deployment's config: move it away, or give \
                 another folder (`agent-host init DIR`)",
                file.display()
            ),
        ));
    }
    let failed =
        |error: std::io::Error| (Status::Failed, format!("cannot write {}: {error}", file.display()));
    std::fs::create_dir_all(dir).map_err(failed)?;
    // `create_new`: a file made meanwhile by someone else is refused, not replaced.
    let mut out = std::fs::OpenOptions::new().write(true).create_new(true).open(&file).map_err(|error| {
        if error.kind() == std::io::ErrorKind::AlreadyExists {
            (Status::BadInput, format!("{} exists; `agent-host init` never overwrites it", file.display()))
        } else {
            failed(error)
        }
    })?;
    out.write_all(SHIPPED_CONFIG.as_bytes()).map_err(failed)?;
    Ok(file)
}

/// What was written and what to do next. The plugins are read from the config itself, so
/// the message follows the file.
fn next_steps(dir: &Path, file: &Path) -> String {
    let (enabled, commented) = builtins_in(SHIPPED_CONFIG);
    let run = if dir == Path::new(".") {
        "agent-host".to_owned()
    } else {
        format!("agent-host --config {}", file.display())
    };
    format!(
        "wrote {file}: the stock deployment, its plugins carried in this binary (builtin = \"NAME\"): \
         {enabled}; more are there, commented out: {commented}.\n\
         \n\
         Next:\n  \
           {run}\n      \
               the offline demo (a scripted model driving the real plugins), then the console\n  \
           export OPENAI_API_KEY=...   and set [model] base_url (or OPENAI_BASE_URL) and model\n      \
               to talk to a real model (provider = \"anthropic\" for Anthropic's API)\n  \
           uncomment the workspace's [[plugin]] blocks in {file} (files and commands, confined to one\n      \
               folder) to let the agent work on a project; `agent-host check` says whether it is ready",
        file = file.display(),
        enabled = enabled.join(", "),
        commented = commented.join(", "),
    )
}

/// The builtins `config` names, enabled and commented out, in file order.
fn builtins_in(config: &str) -> (Vec<&str>, Vec<&str>) {
    let (mut enabled, mut commented) = (Vec::new(), Vec::new());
    for line in config.lines() {
        let (line, list) = match line.strip_prefix("# ") {
            Some(rest) => (rest, &mut commented),
            None => (line, &mut enabled),
        };
        if let Some(name) = line.strip_prefix("builtin = \"").and_then(|rest| rest.strip_suffix('"')) {
            list.push(name);
        }
    }
    (enabled, commented)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_config_names_builtins_enabled_and_commented_out() {
        let (enabled, commented) = builtins_in(SHIPPED_CONFIG);
        assert_eq!(enabled.len(), 3, "{enabled:?}");
        assert!(commented.len() >= 2, "{commented:?}");
        let carried: Vec<&str> = agent_host::plugins::builtin::names().collect();
        for name in enabled.iter().chain(&commented) {
            assert!(carried.contains(name), "{name} is carried: {carried:?}");
        }
    }

    #[test]
    fn an_existing_config_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), "mine").unwrap();
        let (status, message) = write_config(dir.path()).unwrap_err();
        assert_eq!(status, Status::BadInput);
        assert!(message.contains("config.toml exists"), "{message}");
        assert_eq!(std::fs::read_to_string(dir.path().join("config.toml")).unwrap(), "mine");
    }
}
