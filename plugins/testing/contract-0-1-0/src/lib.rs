//! A plugin as a third party would have built it for agent-host:plugin@0.1.0: raw
//! wit-bindgen against `wit/plugin.wit` as it was frozen at 0.1.0 (no `reuse` import).
//! The host, on a later contract line, must load it through its 0.1 bindings and converter.

// Raw wit-bindgen, without the SDK, pins the contract version; its generated export glue is
// unsafe code, which the workspace lints deny elsewhere.
#![allow(unsafe_code, reason = "wit-bindgen's generated export glue")]

wit_bindgen::generate!({ world: "plugin", path: "wit" });

use agent_host::plugin::state;
use agent_host::plugin::types::{
    CallContext, Capabilities, Contribution, PluginManifest, PostToolOutcome, PreToolOutcome, PromptOutcome,
    StopOutcome, ToolCall, ToolResult, ToolSpec, ToolUse,
};
use exports::agent_host::plugin::guest::Guest;

struct Legacy;

impl Guest for Legacy {
    fn manifest() -> PluginManifest {
        PluginManifest {
            name: "legacy".into(),
            version: "0.1.0".into(),
            capabilities: Capabilities::PROVIDE | Capabilities::CALL_TOOL,
            commands: Vec::new(),
        }
    }

    fn configure(config: String) -> Result<String, String> {
        Ok(config)
    }

    fn provide(_ctx: CallContext) -> Contribution {
        let calls = state::get("calls").unwrap_or_else(|| "0".into());
        Contribution {
            instructions: Some(format!(
                "Built against agent-host:plugin@0.1.0; legacy_count was called {calls} times."
            )),
            tools: vec![ToolSpec {
                name: "legacy_count".into(),
                description: "Counts its calls.".into(),
                parameters: r#"{"type":"object","properties":{},"additionalProperties":false}"#.into(),
                mutates: true,
            }],
            messages: Vec::new(),
        }
    }

    fn call_tool(_ctx: CallContext, call: ToolCall) -> Result<String, String> {
        if call.name != "legacy_count" {
            return Err(format!("no tool `{}`", call.name));
        }
        let calls: u64 = state::get("calls").and_then(|text| text.parse().ok()).unwrap_or(0) + 1;
        state::set("calls", &calls.to_string())?;
        Ok(format!("call number {calls}"))
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

    fn command(_ctx: CallContext, name: String, _args: String) -> Result<String, String> {
        Err(format!("no command `/{name}`"))
    }
}

export!(Legacy);
