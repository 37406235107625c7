//! The model's tools: `mode_get` and `mode_set`. They only touch the agent's own
//! bookkeeping, so they stay available in every mode. `mode_set` is offered as `mutating`
//! while the current mode is one the model may not leave on its own: leaving it widens what
//! may change, so the host's approval machinery (and this plugin's `pre-tool-use`, which
//! sees only mutating calls) treats the switch like a change.

use agent_host_sdk::prelude::*;
use serde::Deserialize;

use crate::config::Config;
use crate::current::{self, Switcher};

/// The tool that switches the mode.
pub const SET_TOOL: &str = "mode_set";

/// The arguments of `mode_set`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetArgs {
    /// The mode to switch to, exactly as named.
    pub mode: String,
}

/// `mode_get`.
pub fn get() -> Tool<Config> {
    Tool::new("mode_get", "Returns the mode you are working in now.", |ctx: &Context<Config>, _: NoArgs| {
        current::stored(&ctx.config)
    })
}

/// `mode_set`; its description names the configured modes.
pub fn set() -> Tool<Config> {
    Tool::new(SET_TOOL, "", switch)
        .described_by(|config| {
            format!(
                "Switches to another mode. Use it only when the user has explicitly allowed the switch. \
                 The modes: {}",
                config.names()
            )
        })
        .mutating_when(|ctx| current::effective(&ctx.config).is_ok_and(|mode| !mode.model_may_leave()))
}

fn switch(ctx: &Context<Config>, SetArgs { mode }: SetArgs) -> Result<String, String> {
    let config = &ctx.config;
    if config.mode(&mode).is_none() {
        return Err(format!("unknown mode `{mode}`; the supported modes are {}", config.names()));
    }
    let from = current::stored(config)?;
    // The model knows about its own switch, so no notice is queued, and an older operator
    // notice would now describe a state the model has moved past.
    if current::switch(&from, &mode, Switcher::Model)?
        && config.mode(&from).is_some_and(|left| !left.allow_mutating)
    {
        current::note_left_read_only(&from, ctx.model_calls)?;
    }
    current::discard_notice();
    Ok(format!("Mode is now {mode}."))
}
