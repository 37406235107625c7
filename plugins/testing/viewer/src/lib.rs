//! Test-only plugin `viewer` (and `viewer-twin`, the same source built under another name,
//! its tools and command prefixed `twin_` so that both load side by side): a view read from
//! its own state, for the host's tests of when views are asked and how they travel.
//!
//! State (its own namespace): `entries`, the titles `viewer_add` added, in order; `pick`, the
//! value `/pick VALUE` chose; `tally`, a counter `viewer_tally` bumps that the view does not
//! show (a change of state that changes nothing shown); `prompt`, the last prompt, kept by the
//! `user-prompt-submit` hook when `note_prompt = true`; `started`, set by the `session-start`
//! hook when `note_start = true`. `viewer_peek` reads and writes nothing.
//!
//! The view: a checklist of the entries (the last one in progress, the others completed), a
//! choice `pick` between `alpha` and `beta` moved by `/pick`, and a text saying how many
//! entries there are, then the last prompt when one was kept, then `Session started` when the
//! hook noted it. Config: `heading`, the checklist's label (`Plan` when not given);
//! `fail_view = true` makes `view` panic; `note_prompt = true` keeps each prompt;
//! `note_start = true` notes the session's start.
//!
//! `provide` instructs `The list has N entries.` and declares itself reusable; with
//! `provide_counts = true` it also bumps `provided` (state) whenever the list is not empty
//! (a call with an effect, which the host must neither keep nor, when it asked ahead, commit).
//!
//! `stop` decides from state (contract 0.2.11) and always lets the turn end; with
//! `stop_counts = true` it bumps `stopped` whenever the list is not empty, like `provide`.

use agent_host_sdk::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The checklist's label.
    heading: Option<String>,
    /// `view` panics.
    fail_view: bool,
    /// The `user-prompt-submit` hook keeps each prompt, which the view shows.
    note_prompt: bool,
    /// The `session-start` hook notes the start, which the view shows.
    note_start: bool,
    /// `provide` bumps `provided` whenever the list is not empty.
    provide_counts: bool,
    /// `stop` bumps `stopped` whenever the list is not empty.
    stop_counts: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    /// What the entry says.
    title: String,
}

/// The values `/pick` takes.
const PICKS: [&str; 2] = ["alpha", "beta"];

/// Whether this is the source built as `viewer-twin`.
const TWIN: bool = matches!(env!("CARGO_PKG_NAME").as_bytes(), b"viewer-twin");
const ADD: &str = if TWIN { "twin_add" } else { "viewer_add" };
const PEEK: &str = if TWIN { "twin_peek" } else { "viewer_peek" };
const TALLY: &str = if TWIN { "twin_tally" } else { "viewer_tally" };
const PICK: &str = if TWIN { "twin_pick" } else { "pick" };
const PICK_LINE: &str = if TWIN { "/twin_pick" } else { "/pick" };
const PICK_USAGE: &str = if TWIN { "/twin_pick VALUE" } else { "/pick VALUE" };

/// The plugin's declaration, named after the package it is built as.
pub fn plugin() -> Plugin<Config> {
    Plugin::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
        .tool(Tool::new(ADD, "Adds an entry to the checklist shown.", add).mutating())
        .tool(Tool::new(PEEK, "Says how many entries there are; changes nothing.", peek))
        .tool(Tool::new(TALLY, "Bumps a counter nothing shows.", tally).mutating())
        .command(Command::new(PICK, PICK_USAGE, "Picks alpha or beta", pick))
        .on_user_prompt(note_prompt)
        .on_session_start(note_start)
        .provide(provide)
        .on_stop_from_state(stop)
        .view(view)
}

fn provide(ctx: &Context<Config>, contribution: Contribution) -> Contribution {
    let entries = entries().unwrap_or_default();
    if ctx.config.provide_counts && !entries.is_empty() {
        let provided = state::get_or_default::<u64>("provided").unwrap_or_default() + 1;
        if let Err(error) = state::set("provided", &provided) {
            log::error(&error);
        }
    }
    contribution.instructions(format!("The list has {} entries.", entries.len())).reusable()
}

fn stop(ctx: &Context<Config>) -> StopOutcome {
    if ctx.config.stop_counts && !entries().unwrap_or_default().is_empty() {
        let stopped = state::get_or_default::<u64>("stopped").unwrap_or_default() + 1;
        if let Err(error) = state::set("stopped", &stopped) {
            log::error(&error);
        }
    }
    StopOutcome::Stop
}

fn add(_: &Context<Config>, AddArgs { title }: AddArgs) -> Result<String, String> {
    let mut entries = entries()?;
    entries.push(title);
    state::set("entries", &entries)?;
    Ok(format!("{} entries", entries.len()))
}

fn peek(_: &Context<Config>, _: NoArgs) -> Result<String, String> {
    Ok(format!("{} entries", entries()?.len()))
}

fn tally(_: &Context<Config>, _: NoArgs) -> Result<String, String> {
    let tally = state::get_or_default::<u64>("tally")? + 1;
    state::set("tally", &tally)?;
    Ok(format!("tally {tally}"))
}

fn pick(_: &Context<Config>, value: &str) -> Result<String, String> {
    if !PICKS.contains(&value) {
        return Err(format!("pick one of {}, not `{value}`", PICKS.join(", ")));
    }
    state::set("pick", value)?;
    Ok(format!("picked {value}"))
}

fn note_prompt(ctx: &Context<Config>, prompt: &str) -> PromptOutcome {
    if ctx.config.note_prompt
        && let Err(error) = state::set("prompt", prompt)
    {
        log::error(&error);
    }
    PromptOutcome { block: None, context: None }
}

fn note_start(ctx: &Context<Config>) -> Option<String> {
    if ctx.config.note_start
        && let Err(error) = state::set("started", &true)
    {
        log::error(&error);
    }
    None
}

fn view(ctx: &Context<Config>) -> Vec<Widget> {
    assert!(!ctx.config.fail_view, "fail_view is set, so the view panics");
    let entries = entries().unwrap_or_default();
    let mut checklist = Checklist::new("entries", ctx.config.heading.as_deref().unwrap_or("Plan"));
    for (index, title) in entries.iter().enumerate() {
        checklist = if index + 1 == entries.len() {
            checklist.with(view::entry(title, EntryState::InProgress).active_form(&format!("Doing {title}")))
        } else {
            checklist.entry(title, EntryState::Completed)
        };
    }
    let picked: Option<String> = state::get("pick").unwrap_or_default();
    let choice = PICKS
        .iter()
        .fold(Choice::new("pick", "Pick").current(picked.as_deref()), |choice, value| {
            choice.option(value, value, "")
        })
        .command(PICK_LINE);
    let count = Text::new("count", "Count", &format!("{} entries", entries.len()));
    let mut widgets = vec![checklist.into(), choice.into(), count.into()];
    if let Ok(Some(prompt)) = state::get::<String>("prompt") {
        widgets.push(Text::new("prompt", "Last prompt", &prompt).into());
    }
    if let Ok(Some(true)) = state::get::<bool>("started") {
        widgets.push(Text::new("started", "Started", "Session started").into());
    }
    widgets
}

fn entries() -> Result<Vec<String>, String> {
    state::get_or_default("entries")
}

agent_host_sdk::export_plugin!(plugin);

// The tests run natively, against the SDK's stand-ins for the host.
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests {
    use agent_host_sdk::testing::{Harness, reset};
    use agent_host_sdk::view::{ChoiceWidget, Widget};
    use agent_host_sdk::{Value, json};

    use super::*;

    fn harness(config: Value) -> Harness<Config> {
        reset();
        Harness::new(plugin(), config).unwrap()
    }

    #[test]
    fn the_view_follows_the_entries_and_the_pick() {
        let plugin = harness(json!({ "heading": "Steps" }));
        plugin.tool(ADD, json!({ "title": "one" })).unwrap();
        plugin.tool(ADD, json!({ "title": "two" })).unwrap();
        plugin.command(PICK, "beta").unwrap();
        let widgets = plugin.view();
        let Widget::Checklist(checklist) = &widgets[0] else { panic!("{widgets:?}") };
        assert_eq!(checklist.label, "Steps");
        let states: Vec<_> = checklist.entries.iter().map(|e| (e.title.as_str(), e.state)).collect();
        assert_eq!(states, [("one", EntryState::Completed), ("two", EntryState::InProgress)]);
        assert_eq!(checklist.entries[1].active_form.as_deref(), Some("Doing two"));
        let Widget::Choice(ChoiceWidget { current, command, .. }) = &widgets[1] else { panic!() };
        assert_eq!((current.as_deref(), command.as_deref()), (Some("beta"), Some(PICK_LINE)));
        assert!(plugin.command(PICK, "gamma").is_err());
    }

    #[test]
    #[should_panic(expected = "fail_view is set")]
    fn fail_view_makes_the_view_panic() {
        harness(json!({ "fail_view": true })).view();
    }
}
