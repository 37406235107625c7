//! Tool schemas: each text a plugin offers is checked and compiled once per plugin load, and
//! the compiled validator handed back whenever the text is offered again.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::types::ToolSpec;
use crate::tools::CompiledSchema;
use crate::unpoisoned::LockUnpoisoned as _;

/// Compiled schemas by their text. Looked up for every tool of every model call, so hashed
/// with foldhash (SipHash over the schema texts showed in the profile).
#[derive(Default)]
pub(super) struct SchemaCache {
    compiled: Mutex<foldhash::HashMap<Arc<str>, Arc<CompiledSchema>>>,
}

impl SchemaCache {
    /// Whether `text` was compiled before.
    pub(super) fn has(&self, text: &str) -> bool {
        self.lock().contains_key(text)
    }

    /// The compiled schema for `text`, compiling it on first sight; `Err` says why it is
    /// unusable (and is not kept: a fixed plugin gets another try).
    pub(super) fn get(&self, text: &str) -> Result<Arc<CompiledSchema>, String> {
        if let Some(compiled) = self.lock().get(text) {
            return Ok(compiled.clone());
        }
        let schema: Value = serde_json::from_str(text).map_err(|error| error.to_string())?;
        let compiled = Arc::new(CompiledSchema::compile(&schema)?);
        self.lock().insert(Arc::from(text), compiled.clone());
        Ok(compiled)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, foldhash::HashMap<Arc<str>, Arc<CompiledSchema>>> {
        self.compiled.lock_unpoisoned()
    }
}

/// Why a tool's schema breaks the contract, if it does: not JSON, or not an object. A
/// schema that is an object but does not compile is the model's loss, not a broken call:
/// the tool is left out (see [`SchemaCache::get`]).
pub(super) fn schema_problem(tool: &ToolSpec) -> Option<String> {
    if let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(&tool.parameters) {
        return Some(format!("the schema of tool `{}` is not JSON: {error}", tool.name));
    }
    if !tool.parameters.trim_start().starts_with('{') {
        return Some(format!("the schema of tool `{}` is not a JSON object", tool.name));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(parameters: &str) -> ToolSpec {
        ToolSpec {
            name: "t".into(),
            description: String::new(),
            parameters: parameters.into(),
            mutates: false,
        }
    }

    #[test]
    fn a_schema_is_compiled_once_and_handed_back_after() {
        let cache = SchemaCache::default();
        let text = r#"{"type": "object", "required": ["a"]}"#;
        assert!(!cache.has(text));
        let first = cache.get(text).unwrap();
        assert!(cache.has(text));
        assert!(Arc::ptr_eq(&first, &cache.get(text).unwrap()));
        let sent = first.schema.get();
        assert!(!sent.contains(' '), "compact: {sent}");
        assert_eq!(
            serde_json::from_str::<Value>(sent).unwrap(),
            serde_json::json!({"type": "object", "required": ["a"]})
        );
        assert!(!first.validator.is_valid(&serde_json::json!({})));
        assert!(first.validator.is_valid(&serde_json::json!({"a": 1})));
    }

    #[test]
    fn an_unusable_schema_is_an_error_and_not_kept() {
        let cache = SchemaCache::default();
        let text = r#"{"type": 12}"#;
        assert!(cache.get(text).is_err());
        assert!(!cache.has(text));
    }

    #[test]
    fn only_json_objects_keep_the_contract() {
        assert_eq!(schema_problem(&tool(r#" {"type":"object"}"#)), None);
        assert!(schema_problem(&tool("{nope")).unwrap().contains("is not JSON"));
        assert!(schema_problem(&tool("[]")).unwrap().contains("is not a JSON object"));
    }
}
