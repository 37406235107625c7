//! The catalog in the session's hooks: found when the session starts, offered in the system
//! prompt from the state on every model call.

use agent_host_sdk::{Context, Contribution, log};

use crate::FolderCatalog;

/// `session-start`: finds the catalog once, before the session's first model call; what is
/// skipped is reported.
pub fn session_start<C: FolderCatalog>(ctx: &Context<C::Config>) -> Option<String> {
    if let Err(error) = C::rescan(&ctx.config) {
        log::error(&format!("the {} cannot be kept: {error}", C::FOUND));
    }
    // The catalog goes into the system prompt (`provide`), not into the history.
    None
}

/// `provide`: the catalog's instructions, read from the state.
pub fn provide<C: FolderCatalog>(ctx: &Context<C::Config>, contribution: Contribution) -> Contribution {
    let kept = C::kept();
    let reusable = matches!(kept, Ok(Some(_)));
    // A session that started before the plugin was loaded has no catalog yet: find it now,
    // once; the next call reads it from state.
    let catalog = match kept {
        Ok(Some(catalog)) => Ok(catalog),
        Ok(None) | Err(_) => C::rescan(&ctx.config),
    };
    let contribution = match catalog.map(|catalog| catalog.instructions(&ctx.config)) {
        Ok(Some(text)) => contribution.instructions(text),
        Ok(None) => contribution,
        Err(error) => {
            log::error(&format!("the {} cannot be listed: {error}", C::FOUND));
            return contribution;
        }
    };
    // It depends only on the state read above and the configuration.
    if reusable { contribution.reusable() } else { contribution }
}
