//! Tools a plugin declares from `configure` (contract 0.2.1): checked and compiled once, at
//! load, and offered on every model call without a `provide` call.

use std::collections::HashSet;
use std::sync::Arc;

use super::schema::{SchemaCache, schema_problem};
use super::types::ToolSpec;
use crate::tools::CompiledSchema;

/// A declared tool and its compiled schema.
pub struct DeclaredTool {
    pub spec: ToolSpec,
    pub schema: Arc<CompiledSchema>,
}

/// Checks what `configure` declared: each name once, each schema a JSON object that
/// compiles. Unlike a schema `provide` returns, which costs only that tool on that call, a
/// declared one that fails is the plugin's load error: the declaration is meant to hold for
/// the whole load. `Err` says which tool and why.
pub(super) fn check(tools: Vec<ToolSpec>, schemas: &SchemaCache) -> Result<Vec<DeclaredTool>, String> {
    let mut names = HashSet::new();
    tools
        .into_iter()
        .map(|spec| {
            if !names.insert(spec.name.clone()) {
                return Err(format!("declares the tool `{}` twice", spec.name));
            }
            if let Some(problem) = schema_problem(&spec) {
                return Err(format!("declares a tool whose schema breaks the contract: {problem}"));
            }
            let schema = schemas.get(&spec.parameters).map_err(|error| {
                format!("declares the tool `{}` with an unusable JSON Schema: {error}", spec.name)
            })?;
            Ok(DeclaredTool { spec, schema })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, parameters: &str) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            description: format!("{name} things"),
            parameters: parameters.to_owned(),
            mutates: false,
        }
    }

    const OBJECT: &str = r#"{"type":"object","properties":{"text":{"type":"string"}}}"#;

    #[test]
    fn declared_tools_keep_their_order_and_compile_once_for_the_load() {
        let schemas = SchemaCache::default();
        let declared = check(vec![tool("b", OBJECT), tool("a", "{}")], &schemas).unwrap();
        assert_eq!(declared.iter().map(|t| t.spec.name.as_str()).collect::<Vec<_>>(), ["b", "a"]);
        assert!(schemas.has(OBJECT) && schemas.has("{}"), "compiled into the load's cache");
        assert!(declared[0].schema.validator.is_valid(&serde_json::json!({"text": "hi"})));
        assert!(!declared[0].schema.validator.is_valid(&serde_json::json!({"text": 3})));
    }

    #[test]
    fn a_name_declared_twice_is_refused_naming_it() {
        let error =
            check(vec![tool("echo", "{}"), tool("echo", OBJECT)], &SchemaCache::default()).err().unwrap();
        assert_eq!(error, "declares the tool `echo` twice");
    }

    #[test]
    fn a_schema_that_is_not_json_or_does_not_compile_is_refused_naming_the_tool() {
        let not_json = check(vec![tool("echo", "{nope")], &SchemaCache::default()).err().unwrap();
        assert!(not_json.contains("schema of tool `echo` is not JSON"), "{not_json}");
        let not_object = check(vec![tool("echo", "[1]")], &SchemaCache::default()).err().unwrap();
        assert!(not_object.contains("is not a JSON object"), "{not_object}");
        let bad = check(vec![tool("echo", r#"{"type": 12}"#)], &SchemaCache::default()).err().unwrap();
        assert!(bad.starts_with("declares the tool `echo` with an unusable JSON Schema:"), "{bad}");
    }
}
