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
    use std::collections::{BTreeMap, BTreeSet};
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

    /// `docs/events.md`'s tables: for each event type, the fields its rows name.
    fn documented_fields() -> BTreeMap<String, BTreeSet<String>> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/events.md");
        let text = std::fs::read_to_string(path).expect("docs/events.md");
        let mut documented: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut current = None;
        for row in text.lines().filter(|line| line.starts_with('|')) {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            match cells[1] {
                "" => {}
                "`type`" | "---" => current = None,
                first => current = Some(first.trim_matches('`').to_owned()),
            }
            let Some(event) = &current else { continue };
            let names = cells[2].split('`').skip(1).step_by(2).map(str::to_owned);
            documented.entry(event.clone()).or_default().extend(names);
        }
        documented
    }

    /// The schema's event types and, for each, its fields (those of a flattened choice too).
    fn schema_fields() -> BTreeMap<String, BTreeSet<String>> {
        let schema: serde_json::Value = serde_json::from_str(&schema_text()).unwrap();
        let names = |object: &serde_json::Value| -> Vec<String> {
            object["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default()
        };
        schema["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|alternative| {
                let event = alternative["properties"]["type"]["const"].as_str().unwrap().to_owned();
                let mut fields: BTreeSet<String> = names(alternative).into_iter().collect();
                for choice in alternative["oneOf"].as_array().into_iter().flatten() {
                    fields.extend(names(choice));
                }
                fields.remove("type");
                (event, fields)
            })
            .collect()
    }

    #[test]
    fn docs_events_md_lists_every_event_and_every_field_of_the_schema() {
        assert_eq!(
            documented_fields(),
            schema_fields(),
            "docs/events.md's tables (left) and the event types (right) disagree"
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
                "tool_reviewed",
                "approval_requested",
                "approval_answered",
                "file_edited",
                "tool_result",
                "continued",
                "turn_stopped",
                "continuation_preempted",
                "turn_queued",
                "prompt_blocked",
                "plugin",
                "view_changed",
                "error",
                "turn_ended",
                "plugin_building",
                "plugin_model_call",
                "compacted",
                "compaction_vetoed",
                "plugin_loaded",
                "plugin_rejected",
                "mcp_server_started",
                "mcp_server_failed",
                "subagent_started",
                "subagent",
                "subagent_ended",
            ]
        );
    }
}
