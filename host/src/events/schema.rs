//! The event stream's JSON Schema, generated from [`Event`](super::Event) and committed as
//! `docs/events.schema.json` so that `--json` consumers can validate lines without the
//! Rust types. A unit test keeps the committed file in step with the types.

use schemars::generate::SchemaSettings;

/// The schema of one `--json` line, pretty-printed with a trailing line break: the text of
/// `docs/events.schema.json`.
pub fn schema_text() -> String {
    // Events are only ever written: the schema describes what serializing produces.
    let settings = SchemaSettings::draft2020_12().for_serialize();
    let schema = settings.into_generator().into_root_schema_for::<super::Event>();
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const REFRESH: &str = "UPDATE_EVENT_SCHEMA=1 cargo test -p agent-host --lib events::schema";

    #[test]
    fn the_committed_schema_is_the_one_the_types_generate() {
        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/events.schema.json");
        let generated = schema_text();
        if std::env::var_os("UPDATE_EVENT_SCHEMA").is_some() {
            std::fs::write(&committed, &generated).expect("docs/events.schema.json is writable");
            return;
        }
        let on_disk = std::fs::read_to_string(&committed).unwrap_or_default();
        assert!(
            on_disk == generated,
            "docs/events.schema.json is not what the event types generate; refresh it with `{REFRESH}` \
             and update docs/events.md to match"
        );
    }

    #[test]
    fn the_schema_names_every_event_type() {
        let schema: serde_json::Value = serde_json::from_str(&schema_text()).unwrap();
        let types: Vec<&str> = schema["oneOf"]
            .as_array()
            .expect("one alternative per event type")
            .iter()
            .map(|alternative| {
                alternative["properties"]["type"]["const"].as_str().expect("a `type` constant")
            })
            .collect();
        assert_eq!(
            types,
            [
                "session_started",
                "user_message",
                "injected_message",
                "model_request",
                "assistant_delta",
                "assistant_message",
                "tool_call",
                "tool_decision",
                "approval_requested",
                "approval_answered",
                "tool_result",
                "continued",
                "prompt_blocked",
                "plugin",
                "error",
                "turn_ended",
                "plugin_building",
                "plugin_loaded",
                "plugin_rejected",
            ]
        );
    }
}
