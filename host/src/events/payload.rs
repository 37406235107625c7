//! A plugin event's payload, kept as the JSON text the plugin wrote.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// A plugin event's payload: JSON text, checked when the plugin emitted it and kept as that
/// text. Most sinks never look inside (`--json` writes it out compacted onto its line), and
/// parsing every payload into a tree would cost every tool call; [`Payload::value`] parses
/// it for those that do.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct Payload(Box<RawValue>);

impl Payload {
    /// The payload as a JSON tree.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).expect("a payload is JSON: checked when it was made")
    }

    /// The payload's JSON text, as the plugin wrote it.
    pub fn text(&self) -> &str {
        self.0.get()
    }
}

impl From<Box<RawValue>> for Payload {
    fn from(json: Box<RawValue>) -> Self {
        Self(json)
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl JsonSchema for Payload {
    fn schema_name() -> Cow<'static, str> {
        "Payload".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        // The plugin's own JSON, any shape: the host does not know its kinds.
        json_schema!({ "description": "The JSON the plugin emitted, exactly as it wrote it (compacted onto the line)." })
    }
}
