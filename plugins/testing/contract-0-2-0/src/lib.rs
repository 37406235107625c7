//! A plugin as a third party would build it for agent-host:plugin@0.2.0: raw wit-bindgen
//! against a copy of `wit/plugin.wit` at 0.2.0, using every addition of that version.
//!
//! - `configure` returns its requirements from its config: `reads = "NAME"` gives
//!   `reads-state(NAME)`, `processes = true` gives `runs-processes`, `network = true` gives
//!   `network`.
//! - `status` returns the `badge` state key, or else the config's `status`; it also writes
//!   `status-calls` and emits `status-called`, which the host must discard.
//! - The tool `contract_emit` emits one event with a display form (`display_bytes` long,
//!   if given) and one without.
//! - The tool `contract_run` runs `{"command", "timeout_ms"}` and answers with the process
//!   output as JSON, `timeout_cut_to_ms` included.
//! - The command `/badge TEXT` sets the badge.

// Raw wit-bindgen, without the SDK, pins the contract version; its generated export glue is
// unsafe code, which the workspace lints deny elsewhere.
#![allow(unsafe_code, reason = "wit-bindgen's generated export glue")]

wit_bindgen::generate!({ world: "plugin", path: "wit" });

use agent_host::plugin::types::{
    CallContext, Capabilities, CommandSpec, Configured, Contribution, PluginManifest, PostToolOutcome,
    PreToolOutcome, PromptOutcome, Requirement, StopOutcome, ToolCall, ToolResult, ToolSpec, ToolUse,
};
use agent_host::plugin::{events, process, state};
use exports::agent_host::plugin::guest::Guest;
use serde_json::{Value, json};

struct Current;

const EMIT_ARGUMENTS: &str =
    r#"{"type":"object","properties":{"display_bytes":{"type":"integer"}},"additionalProperties":false}"#;
const RUN_ARGUMENTS: &str = r#"{"type":"object","properties":{"command":{"type":"string"},"timeout_ms":{"type":"integer"}},"required":["command","timeout_ms"],"additionalProperties":false}"#;

fn config(ctx: &CallContext) -> Value {
    serde_json::from_str(&ctx.config).unwrap_or(Value::Null)
}

impl Guest for Current {
    fn manifest() -> PluginManifest {
        PluginManifest {
            name: "contract-two".into(),
            version: "0.2.0".into(),
            capabilities: Capabilities::PROVIDE
                | Capabilities::CALL_TOOL
                | Capabilities::COMMAND
                | Capabilities::STATUS,
            commands: vec![CommandSpec {
                name: "badge".into(),
                description: "Sets the status text.".into(),
                usage: "/badge TEXT".into(),
            }],
        }
    }

    fn configure(config: String) -> Result<Configured, String> {
        let value: Value = serde_json::from_str(&config).map_err(|error| error.to_string())?;
        let mut requires = Vec::new();
        if let Some(name) = value.get("reads").and_then(Value::as_str) {
            requires.push(Requirement::ReadsState(name.to_owned()));
        }
        if value.get("processes").and_then(Value::as_bool) == Some(true) {
            requires.push(Requirement::RunsProcesses);
        }
        if value.get("network").and_then(Value::as_bool) == Some(true) {
            requires.push(Requirement::Network);
        }
        Ok(Configured { config, requires })
    }

    fn provide(_ctx: CallContext) -> Contribution {
        let tool = |name: &str, description: &str, parameters: &str| ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: parameters.into(),
            mutates: false,
        };
        Contribution {
            instructions: Some("Built against agent-host:plugin@0.2.0.".into()),
            tools: vec![
                tool("contract_emit", "Emits two events.", EMIT_ARGUMENTS),
                tool("contract_run", "Runs a command.", RUN_ARGUMENTS),
            ],
            messages: Vec::new(),
        }
    }

    fn call_tool(_ctx: CallContext, call: ToolCall) -> Result<String, String> {
        match call.name.as_str() {
            "contract_emit" => {
                let args: Value = serde_json::from_str(&call.arguments).map_err(|error| error.to_string())?;
                let display = match args.get("display_bytes").and_then(Value::as_u64) {
                    Some(bytes) => "d".repeat(bytes as usize),
                    None => "shown to people\nin two lines".to_owned(),
                };
                events::emit("contract-shown", r#"{"n":1}"#, Some(&display));
                events::emit("contract-hidden", r#"{"n":2}"#, None);
                Ok("emitted".into())
            }
            "contract_run" => {
                let args: Value = serde_json::from_str(&call.arguments).map_err(|error| error.to_string())?;
                let request = process::RunRequest {
                    command: args["command"].as_str().unwrap_or_default().to_owned(),
                    timeout_ms: args["timeout_ms"].as_u64().unwrap_or(1000),
                    max_output_bytes: 4096,
                };
                let output = process::run(&request)?;
                Ok(json!({
                    "stdout": output.stdout,
                    "stderr": output.stderr,
                    "timed_out": output.timed_out,
                    "timeout_cut_to_ms": output.timeout_cut_to_ms,
                })
                .to_string())
            }
            other => Err(format!("no tool `{other}`")),
        }
    }

    fn session_start(_ctx: CallContext) -> Option<String> {
        None
    }

    fn user_prompt_submit(_ctx: CallContext, _prompt: String) -> PromptOutcome {
        PromptOutcome { block: None, context: None }
    }

    fn pre_tool_use(_ctx: CallContext, _call: ToolUse) -> PreToolOutcome {
        PreToolOutcome { decision: None, updated_arguments: None, context: None }
    }

    fn post_tool_use(_ctx: CallContext, _call: ToolUse, _outcome: ToolResult) -> PostToolOutcome {
        PostToolOutcome { replace: None }
    }

    fn stop(_ctx: CallContext, _reply: String) -> StopOutcome {
        StopOutcome::Stop
    }

    fn command(_ctx: CallContext, name: String, args: String) -> Result<String, String> {
        if name != "badge" {
            return Err(format!("no command `/{name}`"));
        }
        state::set("badge", &Value::from(args.trim()).to_string())?;
        Ok(format!("badge: {}", args.trim()))
    }

    fn status(ctx: CallContext) -> Option<String> {
        let calls: u64 = state::get("status-calls").and_then(|text| text.parse().ok()).unwrap_or(0);
        // Both must be discarded by the host: drawing a prompt changes nothing.
        let _ = state::set("status-calls", &(calls + 1).to_string());
        events::emit("status-called", "{}", Some("status was called"));
        let badge = state::get("badge").and_then(|text| serde_json::from_str::<String>(&text).ok());
        badge.or_else(|| config(&ctx).get("status").and_then(Value::as_str).map(str::to_owned))
    }
}

export!(Current);
