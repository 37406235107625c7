//! The `triage-modes` plugin: a custom mode plugin written the way any plugin author would.
//! A session moves through `triage` → `research` → `review`, forward only, through the
//! `advance_stage` tool; `review` opens only when the `todo` list has no open items; every
//! stage has its own instructions.
//!
//! State (namespace `triage-modes`): `mode` = the current stage as a JSON string (the same
//! convention as `agent-mode`, so the console badge shows it). Every switch emits
//! `mode-changed` with `{from, to, by}`.
//! Config: none; the gate needs `[plugin.grants] read_state = ["todo"]`.

mod gate;
mod stages;

use agent_host_sdk::prelude::*;
use serde::Deserialize;

use stages::{STAGES, position};

#[derive(Default)]
struct TriageModes;

#[derive(Deserialize)]
struct AdvanceArgs {
    to: String,
}

impl Plugin for TriageModes {
    fn manifest(&self) -> Manifest {
        Manifest::new("triage-modes", env!("CARGO_PKG_VERSION"))
            .with(Capabilities::PROVIDE | Capabilities::CALL_TOOL)
            .command("stage", "/stage", "Shows the current triage stage")
    }

    fn configure(&self, config: Value) -> Result<Value, String> {
        match config {
            Value::Null => Ok(json!({})),
            Value::Object(table) if table.is_empty() => Ok(json!({})),
            _ => Err("triage-modes takes no configuration; remove its [plugin.config] table".to_owned()),
        }
    }

    fn provide(&self, _ctx: &Context) -> Contribution {
        let current = match current_stage() {
            Ok(index) => index,
            Err(error) => {
                log::error(&error);
                0
            }
        };
        let stage = &STAGES[current];
        // Write the first stage down, so the console badge shows it before any advance.
        if current == 0
            && let Err(error) = state::set("mode", stage.name)
        {
            log::warn(&format!("cannot store the stage: {error}"));
        }
        let next =
            STAGES.get(current + 1).map_or_else(String::new, |next| format!(" The next is `{}`.", next.name));
        Contribution::default()
            .instructions(format!(
                "## Triage workflow\n\nYou are in the `{}` stage of triage → research → review. Stages only move \
                 forward.{next}\n\n{}",
                stage.name, stage.instructions
            ))
            .tool(
                ToolSpec::new("advance_stage", "Moves the triage workflow forward to a later stage.").parameters(
                    json!({
                        "type": "object",
                        "properties": { "to": { "type": "string", "description": "A later stage: `research` or `review`." } },
                        "required": ["to"],
                        "additionalProperties": false
                    }),
                ),
            )
            // Depends on the stored stage only. (At the first stage the call also writes the
            // stage down, an effect, so the host runs it every time; later stages are reused.)
            .reusable()
    }

    fn call_tool(&self, _ctx: &Context, call: ToolCall) -> Result<String, String> {
        if call.name != "advance_stage" {
            return Err(format!("the triage-modes plugin has no tool named `{}`", call.name));
        }
        let AdvanceArgs { to } = call.args()?;
        let Some(target) = position(&to) else {
            return Err(format!("unknown stage `{to}`; the stages are {}", stages::names()));
        };
        let current = current_stage()?;
        let from = STAGES[current].name;
        if target <= current {
            return Err(format!("stages only move forward: you are in `{from}`, so `{to}` is behind you"));
        }
        if STAGES[target].name == "review" {
            gate::review_may_open()?;
        }
        state::set("mode", &to)?;
        events::emit("mode-changed", &json!({ "from": from, "to": to, "by": "model" }));
        Ok(format!("Stage is now {to}."))
    }

    fn command(&self, _ctx: &Context, name: &str, _args: &str) -> Result<String, String> {
        if name != "stage" {
            return Err(format!("the triage-modes plugin has no command named `/{name}`"));
        }
        Ok(format!("stage: {}", STAGES[current_stage()?].name))
    }
}

/// The index of the session's stage; a session that never advanced is in `triage`.
fn current_stage() -> Result<usize, String> {
    match state::get::<String>("mode")? {
        None => Ok(0),
        Some(name) => {
            position(&name).ok_or_else(|| format!("the stored stage `{name}` is not a known stage"))
        }
    }
}

export_plugin!(TriageModes);
