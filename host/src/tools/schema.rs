//! A tool's input schema, compiled once: what a plugin's and an MCP server's tools are
//! validated against and sent to the model as.

use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

/// A compiled JSON Schema and the schema itself, as sent to the model: compact JSON text,
/// copied into every request body as it is rather than walked value by value.
pub struct CompiledSchema {
    pub schema: Arc<RawValue>,
    pub validator: jsonschema::Validator,
}

impl CompiledSchema {
    /// `schema` compiled; `Err` says why it is unusable.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(schema).map_err(|error| error.to_string())?;
        let compact = RawValue::from_string(schema.to_string()).expect("a JSON value prints as JSON");
        Ok(Self { schema: Arc::from(compact), validator })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_is_kept_compact_and_validates() {
        let compiled =
            CompiledSchema::compile(&serde_json::json!({"type": "object", "required": ["a"]})).unwrap();
        assert!(!compiled.schema.get().contains(' '), "compact: {}", compiled.schema.get());
        assert!(!compiled.validator.is_valid(&serde_json::json!({})));
        assert!(compiled.validator.is_valid(&serde_json::json!({"a": 1})));
        assert!(CompiledSchema::compile(&serde_json::json!({"type": 12})).is_err());
    }
}
