//! The `shell` tool: runs a command line through the `process` grant (in the host's OS
//! sandbox, in the plugin's workspace folder) and reports exit status, stdout and stderr to
//! the model.

use agent_host_sdk::prelude::*;
use agent_host_sdk::{process, serde_json};
use serde::{Deserialize, Serialize};

/// Config defaults: long enough for a build step, short enough to notice a hang.
const DEFAULT_TIMEOUT_MS: u64 = 30_000;
const DEFAULT_MAX_OUTPUT_BYTES: u64 = 64 * 1024;

/// The `[plugin.config]` table, normalized.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default = "default_timeout")]
    timeout_ms: u64,
    #[serde(default = "default_max_output")]
    max_output_bytes: u64,
}

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_MS
}

fn default_max_output() -> u64 {
    DEFAULT_MAX_OUTPUT_BYTES
}

/// The tool's arguments.
#[derive(Deserialize)]
struct ShellArgs {
    command: String,
    timeout_ms: Option<u64>,
}

#[derive(Default)]
struct Shell;

fn tool() -> ToolSpec {
    ToolSpec::new(
        "shell",
        "Runs a command line with `sh -c` in the workspace folder and returns its exit status, \
         stdout and stderr. Only granted environment variables are set. The command runs in a \
         sandbox: the workspace and a private /tmp are writable, the system folders read-only; \
         whatever it starts in the background ends when it exits.",
    )
    .parameters(json!({
        "type": "object",
        "properties": {
            "command": { "type": "string", "description": "The command line to run" },
            "timeout_ms": {
                "type": "integer", "minimum": 1,
                "description": "Kill it after this many milliseconds. The host caps it at the \
                                plugin call's deadline ([plugin.limits] timeout_ms, 2000 ms \
                                unless the deployment sets more) and says so when it does."
            }
        },
        "required": ["command"], "additionalProperties": false
    }))
    .mutating()
}

impl Plugin for Shell {
    fn manifest(&self) -> Manifest {
        Manifest::new("shell", env!("CARGO_PKG_VERSION"))
            .with(Capabilities::PROVIDE | Capabilities::CALL_TOOL)
    }

    fn configure(&self, config: Value) -> Result<Value, String> {
        let config = if config.is_null() { json!({}) } else { config };
        let config: Config =
            serde_json::from_value(config).map_err(|error| format!("shell configuration: {error}"))?;
        if config.timeout_ms == 0 {
            return Err("shell configuration: `timeout_ms` must be at least 1".into());
        }
        serde_json::to_value(config).map_err(|error| error.to_string())
    }

    fn provide(&self, _ctx: &Context) -> Contribution {
        Contribution::default().tool(tool()).reusable()
    }

    fn call_tool(&self, ctx: &Context, call: ToolCall) -> Result<String, String> {
        if call.name != "shell" {
            return Err(format!("the shell plugin has no tool `{}`", call.name));
        }
        let config: Config = ctx.config()?;
        let args: ShellArgs = call.args()?;
        let timeout_ms = args.timeout_ms.unwrap_or(config.timeout_ms);
        let output = process::run(&args.command, timeout_ms, config.max_output_bytes)?;
        Ok(report(&output, timeout_ms, config.max_output_bytes))
    }
}

/// The start of the line the host adds to stderr when the call's deadline cut `timeout_ms`.
const CUT_NOTE_PREFIX: &str = "agent-host: timeout_ms cut to ";

/// The time the command really had: what the host's cut note says, else what was asked.
fn given_ms(output: &process::RunOutput, asked_ms: u64) -> u64 {
    output
        .stderr
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix(CUT_NOTE_PREFIX))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(asked_ms)
}

/// The result text the model sees.
fn report(output: &process::RunOutput, asked_ms: u64, max_output_bytes: u64) -> String {
    let timeout_ms = given_ms(output, asked_ms);
    let status = match output.status {
        Some(code) => format!("exit status: {code}"),
        None => "exit status: none (killed)".to_owned(),
    };
    let mut text = format!("{status}\nstdout:\n{}\nstderr:\n{}", output.stdout, output.stderr);
    if output.timed_out {
        text.push_str(&format!("\nnote: timed out after {timeout_ms} ms and was killed"));
    }
    if output.truncated {
        text.push_str(&format!("\nnote: output cut at {max_output_bytes} bytes per stream"));
    }
    text
}

export_plugin!(Shell);
