//! A server's tools as the model is offered them: named `mcp__<server>__<tool>`, their input
//! schemas compiled as a plugin's are, mutating unless the server says they only read.

use std::sync::Arc;

use serde_json::Value;

use crate::config::McpToolFilter;
use crate::tools::CompiledSchema;

/// One tool of an MCP server, ready to offer.
pub struct McpTool {
    /// As the model sees it: `mcp__<server>__<tool>`.
    pub name: String,
    /// As the server knows it.
    pub remote: String,
    pub description: String,
    pub schema: Arc<CompiledSchema>,
    /// Whether it may change the world: every tool but those the operator lists in
    /// `read_only` and those the server marks `readOnlyHint: true` where its hints are
    /// trusted (an unmarked tool is assumed to write; plan mode relies on it).
    pub mutates: bool,
}

/// The longest tool name the model APIs take.
const MAX_TOOL_NAME: usize = 64;

/// The offered name of `server`'s tool `tool`.
pub fn offered_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// The tools of `listed` that `filter` offers, and a load error for each of those that
/// cannot be offered (a name the model APIs refuse, a schema that does not compile).
/// `reads_only` says, from a tool's name and `readOnlyHint`, whether it only reads.
pub(super) fn offered(
    server: &str,
    filter: &McpToolFilter,
    reads_only: &dyn Fn(&str, Option<bool>) -> bool,
    listed: &[rmcp::model::Tool],
) -> (Vec<McpTool>, Vec<String>) {
    let mut tools = Vec::new();
    let mut errors = Vec::new();
    for tool in listed.iter().filter(|tool| filter.offers(&tool.name)) {
        match one(server, reads_only, tool) {
            Ok(tool) => tools.push(tool),
            Err(error) => errors
                .push(format!("MCP server `{server}`, tool `{}`: {error}; the tool is left out", tool.name)),
        }
    }
    (tools, errors)
}

fn one(
    server: &str,
    reads_only: &dyn Fn(&str, Option<bool>) -> bool,
    tool: &rmcp::model::Tool,
) -> Result<McpTool, String> {
    let name = offered_name(server, &tool.name);
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(format!(
            "`{name}` holds characters a model's tool name may not (letters, digits, `_`, `-`)"
        ));
    }
    if name.len() > MAX_TOOL_NAME {
        return Err(format!(
            "`{name}` is longer than the {MAX_TOOL_NAME} characters a model's tool name may have"
        ));
    }
    let schema = Value::Object((*tool.input_schema).clone());
    let schema =
        CompiledSchema::compile(&schema).map_err(|error| format!("its input schema is unusable: {error}"))?;
    let description =
        tool.description.as_deref().or(tool.title.as_deref()).unwrap_or_default().trim().to_owned();
    let read_only = reads_only(&tool.name, tool.annotations.as_ref().and_then(|notes| notes.read_only_hint));
    Ok(McpTool {
        name,
        remote: tool.name.to_string(),
        description,
        schema: Arc::new(schema),
        mutates: !read_only,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, schema: Value, read_only: Option<bool>) -> rmcp::model::Tool {
        let mut value = serde_json::json!({ "name": name, "description": "d", "inputSchema": schema });
        if let Some(read_only) = read_only {
            value["annotations"] = serde_json::json!({ "readOnlyHint": read_only });
        }
        serde_json::from_value(value).unwrap()
    }

    /// A started server's default: its hints decide.
    fn hints(_: &str, hint: Option<bool>) -> bool {
        hint == Some(true)
    }

    fn object() -> Value {
        serde_json::json!({ "type": "object", "properties": { "a": { "type": "string" } } })
    }

    #[test]
    fn only_a_tool_marked_read_only_is_not_mutating() {
        let listed =
            [tool("r", object(), Some(true)), tool("w", object(), Some(false)), tool("u", object(), None)];
        let (tools, errors) = offered("s", &McpToolFilter::default(), &hints, &listed);
        assert!(errors.is_empty(), "{errors:?}");
        let mutates: Vec<(&str, bool)> =
            tools.iter().map(|tool| (tool.name.as_str(), tool.mutates)).collect();
        assert_eq!(mutates, [("mcp__s__r", false), ("mcp__s__w", true), ("mcp__s__u", true)]);
    }

    #[test]
    fn a_bad_schema_or_name_is_that_tools_error_naming_server_and_tool() {
        let bad_schema = serde_json::json!({ "type": "object", "properties": { "a": { "type": 12 } } });
        let listed =
            [tool("ok", object(), None), tool("bad", bad_schema, None), tool("has.dot", object(), None)];
        let (tools, errors) = offered("srv", &McpToolFilter::default(), &hints, &listed);
        assert_eq!(tools.len(), 1);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].starts_with("MCP server `srv`, tool `bad`: its input schema is unusable"),
            "{}",
            errors[0]
        );
        assert!(errors[1].contains("tool `has.dot`") && errors[1].contains("characters"), "{}", errors[1]);
    }

    #[test]
    fn the_filter_allows_then_denies_by_glob() {
        let filter =
            McpToolFilter { allow: Some(vec!["get-*".into(), "echo".into()]), deny: vec!["get-env".into()] };
        let listed = ["echo", "get-sum", "get-env", "add"].map(|name| tool(name, object(), None));
        let (tools, _) = offered("e", &filter, &hints, &listed);
        let names: Vec<&str> = tools.iter().map(|tool| tool.remote.as_str()).collect();
        assert_eq!(names, ["echo", "get-sum"]);
    }
}
