//! The `shell` tool: runs a command line through the `process` grant (in the host's OS
//! sandbox, in the plugin's workspace folder) and reports exit status, stdout and stderr to
//! the model.

use agent_host_sdk::prelude::*;
use agent_host_sdk::process;
use serde::{Deserialize, Serialize};

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

/// The `[plugin.config]` table, normalized.
#[derive(Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    timeout_ms: u64,
    max_output_bytes: u64,
}

impl Default for Config {
    /// Long enough for a build step, short enough to notice a hang.
    fn default() -> Self {
        Self { timeout_ms: 30_000, max_output_bytes: 64 * 1024 }
    }
}

/// The tool's arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ShellArgs {
    /// The command line to run
    command: String,
    /// Kill it after this many milliseconds. The host caps it at the plugin call's deadline
    /// (ten minutes unless the deployment sets otherwise) and says so when it does.
    #[schemars(range(min = 1))]
    timeout_ms: Option<u64>,
}

/// The plugin's declaration.
pub fn plugin() -> Plugin<Config> {
    Plugin::new("shell", env!("CARGO_PKG_VERSION"))
        .configure(|config: &mut Config| {
            if config.timeout_ms == 0 {
                return Err("`timeout_ms` must be at least 1".into());
            }
            // The sandbox's network stays closed unless the grant opens it; nothing here
            // needs it, so only processes are required.
            Ok(vec![Requirement::RunsProcesses])
        })
        .tool(
            Tool::new(
                "shell",
                "Runs a command line with `sh -c` in the workspace folder and returns its exit status, \
                 stdout and stderr. Only granted environment variables are set. The command runs in a \
                 sandbox: the workspace and a private /tmp are writable, the system folders read-only; \
                 whatever it starts in the background ends when it exits. git runs no \
                 repository's core.fsmonitor and no hooks (core.hooksPath=/dev/null).",
                run,
            )
            .mutating(),
        )
}

/// Put before every line: git runs no repository's `core.fsmonitor` and no hooks, which the
/// model could have written into `.git/config` in an earlier call, so a `git status` a
/// policy vouched for runs nothing else. Settings given with `git -c` on the line still win
/// (and a policy reads those). On the line's own first line, so errors keep their numbers.
const GIT_WITHOUT_REPOSITORY_PROGRAMS: &str = "export GIT_CONFIG_COUNT=2 \
     GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=false \
     GIT_CONFIG_KEY_1=core.hooksPath GIT_CONFIG_VALUE_1=/dev/null; ";

fn run(ctx: &Context<Config>, args: ShellArgs) -> Result<String, String> {
    let timeout_ms = args.timeout_ms.unwrap_or(ctx.config.timeout_ms);
    let line = format!("{GIT_WITHOUT_REPOSITORY_PROGRAMS}{}", args.command);
    let output = process::run(&line, timeout_ms, ctx.config.max_output_bytes)?;
    Ok(process::report(&output, timeout_ms, ctx.config.max_output_bytes))
}

agent_host_sdk::export_plugin!(plugin);
