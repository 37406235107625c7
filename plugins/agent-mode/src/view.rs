//! What front ends show of the mode: a choice (id `mode`, category `mode`) of every configured
//! mode, the current one selected, switched by the operator's `/mode NAME`. An option's label
//! is the mode's name and its description the first line of the mode's workflow (the whole
//! workflow is for the model, not for a switcher).

use agent_host_sdk::prelude::*;

use crate::config::Config;
use crate::current;

/// The `view` hook. A mode that cannot be read leaves the choice without a current value.
pub fn view(ctx: &Context<Config>) -> Vec<Widget> {
    let config = &ctx.config;
    let current = current::effective(config).ok().map(|mode| mode.name.as_str());
    let choice = config.modes.iter().fold(Choice::new("mode", "Mode").current(current), |choice, mode| {
        choice.option(&mode.name, &mode.name, mode.description.lines().next().unwrap_or(""))
    });
    vec![choice.command("/mode").category("mode").into()]
}
