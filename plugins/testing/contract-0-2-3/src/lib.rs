//! A plugin as a third party would build it for agent-host:plugin@0.2.3, the last contract
//! before views: raw wit-bindgen against a copy of `wit/plugin.wit` at 0.2.3, targeting the
//! `compacting-plugin` world, so it exports `compactor` but not `viewer`.
//!
//! - The tool `contract_note` stores `{"text"}` under the state key `note`.
//! - `status` returns the note, or `no note` before there is one.
//! - Its compactor `spec` names no hooks, so the host calls none of them.

// Raw wit-bindgen, without the SDK, pins the contract version; its generated export glue is
// unsafe code, which the workspace lints deny elsewhere.
#![allow(unsafe_code, reason = "wit-bindgen's generated export glue")]

wit_bindgen::generate!({ world: "compacting-plugin", path: "wit" });

use agent_host::plugin::state;
use agent_host::plugin::types::{
    CallContext, Capabilities, Configured, Contribution, PluginManifest, PostToolOutcome, PreToolOutcome,
    PromptOutcome, StopOutcome, ToolCall, ToolResult, ToolSpec, ToolUse,
};
use exports::agent_host::plugin::compactor::{
    self, Compacted, CompactionBudget, CompactionHooks, CompactorSpec, HistoryMessage, PreCompactOutcome,
};
use exports::agent_host::plugin::guest::Guest;
use serde_json::Value;

struct Before;

const NOTE_ARGUMENTS: &str = r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}"#;

impl Guest for Before {
    fn manifest() -> PluginManifest {
        PluginManifest {
            name: "contract-three".into(),
            version: "0.2.3".into(),
            capabilities: Capabilities::PROVIDE | Capabilities::CALL_TOOL | Capabilities::STATUS,
            commands: Vec::new(),
        }
    }

    fn configure(config: String) -> Result<Configured, String> {
        Ok(Configured { config, requires: Vec::new() })
    }

    fn provide(_ctx: CallContext) -> Contribution {
        Contribution {
            instructions: Some("Built against agent-host:plugin@0.2.3.".into()),
            tools: vec![ToolSpec {
                name: "contract_note".into(),
                description: "Keeps a note.".into(),
                parameters: NOTE_ARGUMENTS.into(),
                mutates: false,
            }],
            messages: Vec::new(),
        }
    }

    fn call_tool(_ctx: CallContext, call: ToolCall) -> Result<String, String> {
        if call.name != "contract_note" {
            return Err(format!("no tool `{}`", call.name));
        }
        let args: Value = serde_json::from_str(&call.arguments).map_err(|error| error.to_string())?;
        let text = args["text"].as_str().ok_or("`text` must be a string")?;
        state::set("note", &Value::from(text).to_string())?;
        Ok(format!("noted: {text}"))
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

    fn status(_ctx: CallContext) -> Option<String> {
        let note = state::get("note").and_then(|text| serde_json::from_str::<String>(&text).ok());
        Some(note.unwrap_or_else(|| "no note".to_owned()))
    }
}

impl compactor::Guest for Before {
    fn spec(_config: String) -> CompactorSpec {
        CompactorSpec { hooks: CompactionHooks::empty(), trigger_percent: None }
    }

    fn compact(
        _ctx: CallContext,
        _history: Vec<HistoryMessage>,
        _budget: CompactionBudget,
    ) -> Result<Option<compactor::Compaction>, String> {
        Err("contract-three does not compact".into())
    }

    fn pre_compact(_ctx: CallContext, _budget: CompactionBudget) -> PreCompactOutcome {
        PreCompactOutcome { veto: None, keep: Vec::new() }
    }

    fn post_compact(_ctx: CallContext, _done: Compacted) {}
}

export!(Before);
