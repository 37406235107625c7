//! The API's OpenAPI 3.1 document, generated from the handlers and their bodies, served at
//! `/openapi.json` and committed as `docs/openapi.json` (a test keeps the two equal).

use utoipa::OpenApi;

use super::api::*;
use super::{children, events, routes, views};

#[derive(OpenApi)]
#[openapi(
    info(title = "agent-host serve", description = "Sessions, turns, live events and approvals of one agent-host deployment. Every /v1 route takes `Authorization: Bearer <token>`; errors are `{\"error\": \"...\"}`."),
    paths(
        routes::create_session, routes::list_sessions, routes::get_session, routes::delete_session,
        routes::post_message, routes::cancel_turn, routes::answer_approval, routes::run_command,
        routes::export_session, routes::session_state, children::list, views::switch,
        events::stream, routes::plugins, routes::reload, routes::metrics, routes::healthz, routes::readyz,
    ),
    components(schemas(
        ErrorBody, Created, SessionSummary, SessionList, SessionDetail, NewMessage, TurnStarted,
        ApprovalBody, Answer, CommandBody, CommandOutput, PluginTable, SessionState, SwitchBody, Switched,
        ChildList, ChildSummary, ChildAgent,
    )),
    modifiers(&BearerAuth),
)]
pub struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        openapi.security = Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new())]);
    }
}

/// The document as served and committed: pretty JSON with a trailing line break.
pub fn document() -> String {
    let mut text = ApiDoc::openapi().to_pretty_json().expect("the OpenAPI document serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    const REFRESH: &str = "UPDATE_OPENAPI=1 cargo test -p agent-host-serve --lib openapi";

    #[test]
    fn the_committed_document_is_the_one_the_handlers_generate() {
        let committed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json");
        let generated = super::document();
        if std::env::var_os("UPDATE_OPENAPI").is_some() {
            std::fs::write(&committed, &generated).expect("docs/openapi.json is writable");
            return;
        }
        let on_disk = std::fs::read_to_string(&committed).unwrap_or_default();
        assert!(
            on_disk == generated,
            "docs/openapi.json is not what the handlers generate; refresh it with `{REFRESH}`"
        );
        let document: serde_json::Value = serde_json::from_str(&generated).unwrap();
        assert_eq!(document["openapi"], "3.1.0");
        assert!(document["paths"]["/v1/sessions/{id}/events"]["get"].is_object());
    }
}
