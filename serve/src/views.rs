//! What plugins show, over HTTP: each session's views (the agent asks them again wherever a
//! plugin's state may change, its `view_changed` events going to the session's stream), as
//! of the last event numbered; and a view's choice switched by the session's
//! owner, which runs the command the plugin gave for it with a value it lists.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::api::{ApiError, ErrorBody, JsonBody, SwitchBody, Switched};
use super::auth::Principal;
use super::state::{App, Open};
use agent_host::agent::{LiveSession, split_command};
use agent_host::events::{PluginView, Widget};

/// Asks again the views of `session` that may be stale, their changes to `open`'s stream.
pub async fn refresh(app: &App, open: &Open, session: &mut LiveSession) {
    app.host.refresh_views(session, &*open.hub).await;
}

/// Refreshes the views of every session the server has open after each reload that
/// swapped a new set in, so a stream following an idle session sees what the reload
/// changed at once. A session a turn holds is left to that turn, which refreshes on the new
/// set at its next step.
pub async fn follow_reloads(app: Arc<App>) {
    let mut reloads = app.host.reloads();
    while reloads.changed().await.is_ok() {
        for open in app.open_sessions() {
            if let Ok(mut session) = open.handle.try_lock() {
                refresh(&app, &open, &mut session).await;
            }
        }
    }
}

/// The session's views and the id of the last event they include. Refreshed first when no
/// turn holds the session; while one does, as its events left them.
pub async fn of_session(app: &App, open: &Open) -> (Vec<PluginView>, Option<String>) {
    let Some(shared) = &app.shared else {
        return match open.handle.try_lock() {
            Ok(mut session) => {
                refresh(app, open, &mut session).await;
                open.hub.views_and_last_id(Some(session.views().current()))
            }
            Err(_) => open.hub.views_and_last_id(None),
        };
    };
    // Where hosts share the store, the id is the shared log's: the views with the last
    // event written there.
    let store = app.host.sessions().store();
    match open.handle.try_lock() {
        Ok(mut session) => {
            refresh(app, open, &mut session).await;
            shared.relay.flush().await;
            (session.views().current(), super::shared::last_event_id(&**store, &open.id))
        }
        Err(_) => super::shared::logged_views_and_id(&**store, &open.id),
    }
}

/// Any principal who may use the session may switch a choice of a view with a value the
/// choice lists, even when the command is a plugin's that `[serve] plugin_commands` keeps
/// for admins: the plugin offered exactly that line. A choice whose command is not its own
/// plugin's goes through the same check as `/commands`.
#[utoipa::path(post, path = "/v1/sessions/{id}/views/{plugin}/{choice}", tag = "turns",
    params(("id" = String, Path, description = "The session's id"),
           ("plugin" = String, Path, description = "The plugin whose view shows the choice"),
           ("choice" = String, Path, description = "The choice widget's `id`")),
    request_body = SwitchBody,
    responses((status = 200, body = Switched, description = "The choice's command ran with the value"),
              (status = 400, body = ErrorBody, description = "The value is not one the choice lists (the error names those it does), the choice has no command (only the model moves it), or the command failed"),
              (status = 404, body = ErrorBody, description = "No such session, or the plugin shows no such choice"),
              (status = 409, body = ErrorBody, description = "A turn is running in this session"),
              (status = 401, body = ErrorBody)))]
pub async fn switch(
    State(app): State<Arc<App>>,
    principal: Principal,
    Path((id, plugin, choice)): Path<(String, String, String)>,
    JsonBody(body): JsonBody<SwitchBody>,
) -> Result<Json<Switched>, ApiError> {
    let open = app.session(&principal, &id).await?;
    let mut session = open.handle.try_lock().map_err(|_| {
        ApiError(StatusCode::CONFLICT, "a turn is running in this session; try again when it ends".into())
    })?;
    refresh(&app, &open, &mut session).await;
    let view = session.views().of(&plugin).cloned();
    let line = switch_line(view.as_ref(), &plugin, &choice, &body.value)?;
    if !own_command(&app, &plugin, &line) {
        super::commands::permit(&app, &principal, &id, &line)?;
    }
    // The command asks the views again, as every command does.
    let output = app.host.command(&mut session, &line, &*open.hub).await;
    let view = session.views().of(&plugin).cloned();
    match output {
        Ok(output) => Ok(Json(Switched { output, view })),
        Err(error) => Err(ApiError(StatusCode::BAD_REQUEST, format!("{line}: {error}"))),
    }
}

/// The line that moves `choice` of `plugin`'s view to `value`, or why there is none.
fn switch_line(
    view: Option<&PluginView>,
    plugin: &str,
    choice: &str,
    value: &str,
) -> Result<String, ApiError> {
    let missing =
        || ApiError(StatusCode::NOT_FOUND, format!("`{plugin}` shows no choice `{choice}` in this session"));
    let view = view.ok_or_else(missing)?;
    if let Some(line) = view.switch_line(choice, value) {
        return Ok(line);
    }
    let (options, command) = view
        .widgets
        .iter()
        .find_map(|widget| match widget {
            Widget::Choice { id, options, command, .. } if id == choice => Some((options, command)),
            _ => None,
        })
        .ok_or_else(missing)?;
    let listed: Vec<String> = options.iter().map(|option| format!("`{}`", option.value)).collect();
    let why = match command {
        None => format!("choice `{choice}` of `{plugin}` has no command: only the model moves it"),
        Some(_) => format!(
            "`{value}` is not a value of choice `{choice}` of `{plugin}`; it lists {}",
            if listed.is_empty() { "none".to_owned() } else { listed.join(", ") }
        ),
    };
    Err(ApiError(StatusCode::BAD_REQUEST, why))
}

/// Whether `line` runs a command `plugin` itself declares.
fn own_command(app: &App, plugin: &str, line: &str) -> bool {
    let (name, _) = split_command(line);
    let plugins = app.host.plugins();
    plugins.by_name(plugin).is_some_and(|loaded| loaded.commands().iter().any(|command| command.name == name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_host::events::stages as view;

    #[test]
    fn a_value_the_choice_does_not_list_is_refused_naming_those_it_does() {
        let listed = view(Some("/stage"));
        assert_eq!(switch_line(Some(&listed), "stages", "stage", "fix").unwrap(), "/stage fix");
        let ApiError(status, why) = switch_line(Some(&listed), "stages", "stage", "ship").unwrap_err();
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            why.contains("`ship`") && why.contains("`stage`") && why.contains("`triage`, `fix`"),
            "{why}"
        );
        let ApiError(status, why) = switch_line(Some(&view(None)), "stages", "stage", "fix").unwrap_err();
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(why.contains("only the model"), "{why}");
        let ApiError(status, _) = switch_line(Some(&listed), "stages", "other", "fix").unwrap_err();
        assert_eq!(status, StatusCode::NOT_FOUND);
        let ApiError(status, _) = switch_line(None, "stages", "stage", "fix").unwrap_err();
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}
