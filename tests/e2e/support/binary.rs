//! The real binary as a child process on a deployment folder.

use std::path::Path;

/// `agent-host --config <dir>/config.toml --json --prompt <prompt> [--session <id>]`, with
/// the OpenAI variables of the test's own environment removed, colour off, stdout and stderr
/// piped, and the child killed when the handle drops.
pub fn json_prompt_command(dir: &Path, session: Option<&str>, prompt: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(["--json", "--prompt", prompt])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(id) = session {
        command.args(["--session", id]);
    }
    command
}

/// `agent-host --config <dir>/config.toml check --offline` after writing `config` there, with
/// `env` set on top of the test's environment: its exit code and stderr.
pub fn check_offline(dir: &Path, config: &str, env: &[(&str, &Path)]) -> (Option<i32>, String) {
    std::fs::write(dir.join("config.toml"), config).expect("write the config");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    command.env_remove("OPENAI_API_KEY").env_remove("OPENAI_BASE_URL");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(["check", "--offline"])
        .output()
        .expect("the binary runs");
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}
