//! The `triage-modes` plugin: a custom mode plugin written the way any plugin author would.
//! A session moves through `triage` → `research` → `review`, forward only, through the
//! `advance_stage` tool; `review` opens only when the `todo` list has no open items; every
//! stage has its own instructions, `status` shows the stage, and the view shows the stages
//! as a choice with no command (only the model moves it).
//!
//! State (namespace `triage-modes`): `mode` = the current stage as a JSON string, absent in
//! `triage` (the `agent-mode` convention, for plugins that read it through a grant). Every
//! advance emits `mode-changed` with `{from, to, by}`. Config: none; the gate needs
//! `[plugin.grants] read_state = ["todo"]` (not declared as a requirement: only `review`
//! needs it, and without it `advance_stage` says which grant is missing).

mod gate;
mod stages;

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

use agent_host_sdk::prelude::*;
use serde::Deserialize;

use stages::{STAGES, position};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AdvanceArgs {
    /// A later stage: `research` or `review`.
    to: String,
}

/// The plugin's declaration.
pub fn plugin() -> Plugin<NoConfig> {
    Plugin::new("triage-modes", env!("CARGO_PKG_VERSION"))
        .tool(Tool::new("advance_stage", "Moves the triage workflow forward to a later stage.", advance))
        .provide(|_, contribution| {
            let current = current_stage().unwrap_or_else(|error| {
                log::error(&error);
                0
            });
            let (stage, next) = (&STAGES[current], STAGES.get(current + 1));
            let next = next.map_or_else(String::new, |next| format!(" The next is `{}`.", next.name));
            // Depends on the stored stage only.
            contribution
                .instructions(format!(
                    "## Triage workflow\n\nYou are in the `{}` stage of triage → research → review. Stages \
                     only move forward.{next}\n\n{}",
                    stage.name, stage.instructions
                ))
                .reusable()
        })
        .status(|_| current_stage().ok().map(|index| STAGES[index].name.to_owned()))
        .command(Command::new("stage", "/stage", "Shows the current triage stage", |_, _| {
            Ok(format!("stage: {}", STAGES[current_stage()?].name))
        }))
        .view(view)
}

/// What front ends show: the stages as a choice with the current one. It has no command,
/// so no front end offers to switch it: only the model moves the stage, with
/// `advance_stage`, whose checks (forward only, review after the todos) a switcher would
/// bypass.
fn view(_ctx: &Context<NoConfig>) -> Vec<Widget> {
    let current = current_stage().ok().map(|index| STAGES[index].name);
    let stages = STAGES.iter().fold(Choice::new("stage", "Stage").current(current), |choice, stage| {
        choice.option(stage.name, stage.label, stage.summary)
    });
    vec![stages.category("mode").into()]
}

fn advance(_ctx: &Context<NoConfig>, AdvanceArgs { to }: AdvanceArgs) -> Result<String, String> {
    let target =
        position(&to).ok_or_else(|| format!("unknown stage `{to}`; the stages are {}", stages::names()))?;
    let current = current_stage()?;
    let from = STAGES[current].name;
    if target <= current {
        return Err(format!("stages only move forward: you are in `{from}`, so `{to}` is behind you"));
    }
    if STAGES[target].name == "review" {
        gate::review_may_open()?;
    }
    state::set("mode", &to)?;
    events::emit(
        "mode-changed",
        &json!({ "from": from, "to": to, "by": "model" }),
        Some(&format!("mode → {to}")),
    );
    Ok(format!("Stage is now {to}."))
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

agent_host_sdk::export_plugin!(plugin);
