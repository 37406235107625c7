//! Which slash commands a principal may run over HTTP. At the console the operator runs
//! every command; a principal owns only her sessions, so over HTTP: `/export` writes no file
//! on the server (`GET /v1/sessions/{id}/export` returns the document instead), `/reload` is
//! an admin's, and a plugin's command is an admin's unless `[serve] plugin_commands` names
//! it — it may change what the operator set for everyone (a permission preset), and the
//! host knows no plugin well enough to tell which do. The one exception is a switch a
//! plugin's own view offers (a choice with a command, with a value it lists): the owner
//! makes it through `POST …/views/{plugin}/{choice}` (`views.rs`), not here.

use axum::http::StatusCode;

use super::api::ApiError;
use super::auth::Principal;
use super::state::App;
use agent_host::agent::{BUILT_IN_COMMANDS, split_command};

/// `Ok` when `principal` may run `line` in session `id` over HTTP; else why not.
pub fn permit(app: &App, principal: &Principal, id: &str, line: &str) -> Result<(), ApiError> {
    let (name, _) = split_command(line);
    match name {
        "export" => Err(ApiError(
            StatusCode::BAD_REQUEST,
            format!(
                "over HTTP, /export writes no file on the server: GET /v1/sessions/{id}/export returns the \
                 session document"
            ),
        )),
        "reload" if !principal.admin => Err(ApiError(
            StatusCode::FORBIDDEN,
            "only an admin (`[serve] admins`) may reload, here or with POST /v1/reload".into(),
        )),
        _ if BUILT_IN_COMMANDS.contains(&name) || principal.admin => Ok(()),
        _ if !is_plugin_command(app, name) || opened_to_everyone(app, name) => Ok(()),
        _ => Err(ApiError(
            StatusCode::FORBIDDEN,
            format!(
                "/{name} is a plugin's command, which only an admin may run over HTTP unless \
                 `[serve] plugin_commands` names it"
            ),
        )),
    }
}

fn is_plugin_command(app: &App, name: &str) -> bool {
    app.host
        .plugins()
        .plugins()
        .iter()
        .any(|plugin| plugin.commands().iter().any(|command| command.name == name))
}

fn opened_to_everyone(app: &App, name: &str) -> bool {
    app.limits.plugin_commands.iter().any(|open| open == "*" || open == name)
}
