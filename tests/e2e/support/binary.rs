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
